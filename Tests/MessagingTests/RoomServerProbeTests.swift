import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import TransportPOSIX
import XCTest

/// A probe (GOODBYE instead of HELLO, what `svc-browse --verify` sends) over in-memory
/// streams: answered, closed, not reported, and given no member number.
final class RoomServerProbeTests: XCTestCase {
    final class Fixture {
        let scheduler = ManualScheduler()
        var events: [RoomServer.Event] = []
        private(set) var server: RoomServer!

        init(maximumPending: Int = 512) {
            var options = RoomServer.Options(name: "room")
            options.maximumPendingConnections = maximumPending
            server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [unowned self] in
                events.append($0)
            }
        }

        func connect() -> RawPeer {
            let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler)
            let peer = RawPeer(mine)
            server.accept(theirs)
            scheduler.run()
            return peer
        }

        /// The events as lines, as far as this test cares.
        var lines: [String] {
            events.map { event in
                switch event {
                case .joined(let id, let name, _, _): "joined #\(id) \(name)"
                case .left(let id, let name, _): "left #\(id) \(name)"
                case .refused(_, let reason): "refused \(reason)"
                case .note(let text): "note \(text)"
                default: "other"
                }
            }
        }
    }

    func testAProbeIsAnsweredAndClosedWithoutAReportOrAMemberNumber() {
        let fixture = Fixture()
        let probe = fixture.connect()
        guard case .hello(let hello)? = probe.messages.first else { return XCTFail("no HELLO first: \(probe.messages)") }
        XCTAssertEqual(hello.name, "room")
        _ = probe.send(.goodbye(reason: "svc-browse --verify"))
        probe.stream.finish()
        fixture.scheduler.run()
        XCTAssertTrue(probe.messages.contains { if case .goodbye = $0 { true } else { false } }, "\(probe.messages)")
        XCTAssertNotNil(probe.closeReason, "the server closed the probe")
        XCTAssertEqual(fixture.lines, [], "a probe is not reported")
        XCTAssertEqual(fixture.server.names, ["room"])

        let member = fixture.connect()
        _ = member.send(.hello(.init(name: "alice")))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.lines, ["joined #1 alice"], "the probe took no member number")
    }

    func testAHelloAfterAProbesGoodbyeDoesNotJoin() {
        let fixture = Fixture()
        let probe = fixture.connect()
        _ = probe.send(.goodbye(reason: ""))
        _ = probe.send(.hello(.init(name: "sneaky")))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.server.names, ["room"])
        XCTAssertEqual(fixture.lines, [])
        fixture.scheduler.advance(by: .seconds(3))
        XCTAssertNotNil(probe.closeReason, "closed within the goodbye grace even though the probe never closed")
    }

    func testRefusedConnectionsTakeNoMemberNumberEither() {
        let fixture = Fixture()
        let rude = fixture.connect()
        _ = rude.send(.who)
        fixture.scheduler.run()
        fixture.scheduler.advance(by: .seconds(2))
        XCTAssertEqual(fixture.lines.count, 1)
        XCTAssertTrue(fixture.lines.first?.hasPrefix("refused ") ?? false, "\(fixture.lines)")
        let member = fixture.connect()
        _ = member.send(.hello(.init(name: "bob")))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.lines.last, "joined #1 bob")
    }

    func testProbesStillCountAgainstThePendingLimit() {
        let fixture = Fixture(maximumPending: 2)
        let silent = fixture.connect()
        let probe = fixture.connect()
        probe.stream.pauseReading() // reads nothing more, so it does not close: it holds its place until it is gone
        _ = probe.send(.goodbye(reason: ""))
        fixture.scheduler.run()
        _ = fixture.connect()
        XCTAssertTrue(silent.messages.contains { if case .error(let code, _) = $0 { code == ProtocolError.Code.serverFull.rawValue } else { false } },
                      "three pending with the probe: the oldest was closed for the newcomer: \(silent.messages)")
    }

    func testAFloodOfProbesIsSummarised() {
        let fixture = Fixture()
        for _ in 0..<25 {
            let probe = fixture.connect()
            _ = probe.send(.goodbye(reason: ""))
            probe.stream.finish()
            fixture.scheduler.run()
        }
        XCTAssertEqual(fixture.lines, [])
        fixture.scheduler.advance(by: .seconds(11))
        XCTAssertEqual(fixture.lines, ["note more than 20 connections in the last 10 s only checked that the room answers (as svc-browse --verify does): 5 beyond the first 20"])
    }
}
