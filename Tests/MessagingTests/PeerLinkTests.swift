import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import TransportPOSIX
import XCTest

/// PeerLink over an in-memory stream with a manual clock: deadlines and violations without
/// sockets or sleeping.
final class PeerLinkTests: XCTestCase {
    /// A started link facing a hand-driven peer; `ends` collects how the link ended.
    final class Fixture {
        let scheduler = ManualScheduler()
        let link: PeerLink
        let peer: RawPeer
        var received: [Message] = []
        var ends: [PeerLink.EndReason] = []
        /// Called after each message is recorded.
        var whenReceived: (Message) -> Void = { _ in }

        init(handshakeTimeout: Duration? = nil, heartbeat: Duration = .seconds(15)) {
            let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler)
            link = PeerLink(mine, scheduler: scheduler, handshakeTimeout: handshakeTimeout, heartbeatInterval: heartbeat)
            peer = RawPeer(theirs)
            link.start(onMessage: { [unowned self] in received.append($0); whenReceived($0) }, onEnd: { [unowned self] in ends.append($0) })
            scheduler.run()
        }

        var errorsReceived: [UInt16] {
            peer.messages.compactMap { if case .error(let code, _) = $0 { code } else { nil } }
        }
    }

    func testBeforeItsHandshakeAPeerGetsNoPongAndAFrameItCannotDecodeEndsTheLink() {
        let fixture = Fixture(handshakeTimeout: .seconds(10))
        _ = fixture.peer.send(.ping(token: 7))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received, [.ping(token: 7)], "the server decides: only HELLO may come first")
        XCTAssertFalse(fixture.peer.messages.contains(.pong(token: 7)))
        _ = fixture.peer.send(raw: Frame(type: 0x7777, payload: [1]).encoded)
        fixture.scheduler.run()
        XCTAssertEqual(fixture.errorsReceived, [ProtocolError.Code.notHandshaken.rawValue])
        fixture.scheduler.advance(by: .seconds(2))
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("ended with \(fixture.ends)") }
        XCTAssertEqual(error.code, .notHandshaken)
    }

    func testAPeerSendingThousandsOfFramesAtOnceIsHandledInTurns() {
        let fixture = Fixture()
        var burst: [UInt8] = []
        for _ in 0..<1000 { Message.who.encode(into: &burst) }
        _ = fixture.peer.send(raw: burst)
        var steps = 0
        while fixture.received.isEmpty && steps < 100 {
            _ = fixture.scheduler.run(atMost: 1)
            steps += 1
        }
        XCTAssertEqual(fixture.received.count, PeerLink.framesPerTurn, "one turn, then the others' work")
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received.count, 1000, "every frame is handled, in later turns")
        XCTAssertTrue(fixture.link.isOpen)
    }

    func testMessagesSentTogetherArriveInOrder() {
        let fixture = Fixture()
        let batch: [Message] = (0..<100).map { .text(from: "", to: "", text: "line \($0)") } + [.who]
        XCTAssertTrue(fixture.link.send(contentsOf: batch))
        XCTAssertTrue(fixture.link.send(.ping(token: 1)))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.peer.messages, batch + [.ping(token: 1)])
    }

    func testAHoldStopsHandlingFramesAlreadyReceivedUntilItIsReleased() {
        let fixture = Fixture()
        var burst: [UInt8] = []
        for _ in 0..<10 { Message.who.encode(into: &burst) }
        var held = false
        fixture.whenReceived = { [unowned fixture] _ in
            if !held { held = true; fixture.link.holdReading(.disk) } // after the first frame
        }
        _ = fixture.peer.send(raw: burst)
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received.count, 1, "the frames behind the hold wait, though they arrived in the same read")
        fixture.link.releaseReading(.disk)
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received.count, 10)
    }

    func testLargeFramesEndATurnSooner() {
        let fixture = Fixture()
        var burst: [UInt8] = []
        let text = String(repeating: "x", count: Message.maximumTextBytes)
        for _ in 0..<20 { Message.text(from: "", to: "", text: text).encode(into: &burst) }
        _ = fixture.peer.send(raw: burst)
        var steps = 0
        while fixture.received.isEmpty && steps < 100 {
            _ = fixture.scheduler.run(atMost: 1)
            steps += 1
        }
        // A turn ends after 256 KiB (4 of these); a read that brings more waits for the next one.
        XCTAssertLessThan(fixture.received.count, 20, "not all at once: 256 KiB a turn, then the others' turn")
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received.count, 20)
    }

    func testAHandshakeThatDoesNotCompleteInTimeEndsTheLink() {
        let fixture = Fixture(handshakeTimeout: .seconds(10))
        fixture.scheduler.advance(by: .seconds(9))
        XCTAssertTrue(fixture.link.isOpen)
        fixture.scheduler.advance(by: .seconds(2))
        XCTAssertEqual(fixture.errorsReceived, [ProtocolError.Code.handshakeTimeout.rawValue])
        XCTAssertEqual(fixture.ends.count, 1)
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("ended with \(fixture.ends)") }
        XCTAssertEqual(error.code, .handshakeTimeout)
    }

    func testACompletedHandshakeCancelsTheDeadline() {
        let fixture = Fixture(handshakeTimeout: .seconds(10), heartbeat: .seconds(60))
        fixture.link.handshakeCompleted()
        fixture.scheduler.advance(by: .seconds(30))
        XCTAssertTrue(fixture.link.isOpen)
        XCTAssertEqual(fixture.errorsReceived, [])
    }

    func testASilentPeerIsPingedThenDroppedAfterThreeMisses() {
        let fixture = Fixture()
        fixture.scheduler.advance(by: .seconds(15))
        XCTAssertEqual(fixture.peer.messages, [.ping(token: 1)])
        fixture.scheduler.advance(by: .seconds(30))
        XCTAssertEqual(fixture.peer.messages, [.ping(token: 1), .ping(token: 2), .ping(token: 3)])
        XCTAssertTrue(fixture.ends.isEmpty)
        fixture.scheduler.advance(by: .seconds(15))
        XCTAssertEqual(fixture.errorsReceived, [ProtocolError.Code.heartbeatTimeout.rawValue])
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("ended with \(fixture.ends)") }
        XCTAssertEqual(error.code, .heartbeatTimeout)
        XCTAssertEqual(fixture.scheduler.pendingTimerCount, 0, "an ended link keeps no timer")
    }

    func testAnAnsweringPeerStaysAndPingsAreAnswered() {
        let fixture = Fixture()
        for minute in 1...10 {
            fixture.scheduler.advance(by: .seconds(15))
            fixture.peer.send(.pong(token: UInt64(minute)))
            fixture.peer.send(.ping(token: UInt64.max))
            fixture.scheduler.run()
        }
        XCTAssertTrue(fixture.ends.isEmpty)
        XCTAssertEqual(fixture.peer.messages.filter { $0 == .pong(token: UInt64.max) }.count, 10)
        XCTAssertTrue(fixture.received.isEmpty, "PING and PONG are the link's own business")
    }

    func testAPeerThatClosesItsSideAndReadsNothingIsDroppedAfterSilence() {
        let fixture = Fixture()
        fixture.peer.stream.pauseReading()
        fixture.link.send(.text(from: "a", to: "", text: "waits in the outbox"))
        fixture.peer.stream.finish()
        fixture.scheduler.run()
        XCTAssertFalse(fixture.link.isOpen)
        XCTAssertTrue(fixture.ends.isEmpty, "the outbox cannot drain: the link waits")
        fixture.scheduler.advance(by: .seconds(61))
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("still waiting after a silent minute: \(fixture.ends)") }
        XCTAssertEqual(error.code, .heartbeatTimeout)
    }

    func testAnUnknownTypeIsReportedAndTheLinkStays() {
        let fixture = Fixture()
        fixture.peer.send(raw: [0, 0, 0, 1, 0x7F, 0x7F, 0, 0, 42])
        fixture.peer.send(.who)
        fixture.scheduler.run()
        XCTAssertEqual(fixture.errorsReceived, [ProtocolError.Code.unknownType.rawValue])
        XCTAssertEqual(fixture.received, [.who])
        XCTAssertTrue(fixture.ends.isEmpty)
    }

    func testAnOversizeFrameEndsTheLinkAndNothingAfterItIsRead() {
        let fixture = Fixture()
        fixture.peer.send(raw: [0, 0x10, 0, 1, 0, 0x10, 0, 0]) // 1 MiB + 1 announced
        for token in 1...1000 { fixture.peer.send(.ping(token: UInt64(token))) } // ignored from now on
        fixture.scheduler.run()
        XCTAssertEqual(fixture.errorsReceived, [ProtocolError.Code.frameTooLarge.rawValue])
        XCTAssertFalse(fixture.peer.messages.contains { if case .pong = $0 { true } else { false } })
        XCTAssertLessThanOrEqual(fixture.scheduler.pendingTimerCount, 2, "one closing grace and no more")
        fixture.scheduler.advance(by: .seconds(1))
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("ended with \(fixture.ends)") }
        XCTAssertEqual(error.code, .frameTooLarge)
    }

    func testManyFatalErrorsSetOneClosingTimer() {
        let fixture = Fixture()
        fixture.peer.stream.pauseReading() // the link's ERRORs cannot get out, so it cannot finish
        for _ in 1...100 { fixture.link.reject(ProtocolError(.malformedFrame, "bad")); fixture.link.reject(ProtocolError(.badMagic, "bad")) }
        fixture.scheduler.run()
        XCTAssertEqual(fixture.scheduler.pendingTimerCount, 2, "the heartbeat and one closing grace")
        fixture.scheduler.advance(by: .seconds(1))
        guard case .violation(let error) = fixture.ends.first else { return XCTFail("ended with \(fixture.ends)") }
        XCTAssertEqual(error.code, .badMagic, "the first fatal error is the one reported")
    }

    func testAPeerErrorThatClosesEndsTheLinkWithIt() {
        let fixture = Fixture()
        fixture.peer.send(.error(code: ProtocolError.Code.serverFull.rawValue, message: "full"))
        fixture.peer.stream.finish()
        fixture.scheduler.run()
        XCTAssertEqual(fixture.ends, [.peerError(code: ProtocolError.Code.serverFull.rawValue, message: "full")])
    }

    func testFramesAfterAPeersGoodbyeAreIgnored() {
        let fixture = Fixture()
        _ = fixture.peer.send(.hello(.init(name: "peer")))
        _ = fixture.peer.send(.goodbye(reason: "bye"))
        _ = fixture.peer.send(.text(from: "peer", to: "", text: "after"))
        _ = fixture.peer.send(.fileChunk(id: 1, data: [1]))
        _ = fixture.peer.send(.ping(token: 9))
        fixture.scheduler.run()
        XCTAssertEqual(fixture.received, [.hello(.init(name: "peer")), .goodbye(reason: "bye")])
        XCTAssertFalse(fixture.peer.messages.contains(.pong(token: 9)))
    }

    func testGoodbyeClosesInAnOrderlyWayAndAStuckPeerIsCutOffAfterTheGrace() {
        let fixture = Fixture()
        fixture.peer.stream.pauseReading()
        fixture.link.goodbye("done")
        fixture.scheduler.advance(by: .seconds(1))
        XCTAssertTrue(fixture.ends.isEmpty, "still waiting for the peer")
        fixture.scheduler.advance(by: .seconds(1))
        XCTAssertEqual(fixture.ends, [.transport(.closedLocally)])
    }
}
