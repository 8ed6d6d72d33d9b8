@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// All members' outboxes together stay under `Options.roomOutboxLimit`: members that read
/// nothing are dropped, those holding the most first; members that read are not.
final class RoomServerOutboxTests: XCTestCase {
    let scheduler = ManualScheduler()
    var room: RoomServer!

    override func setUp() {
        var options = RoomServer.Options(name: "host")
        options.roomOutboxLimit = 3 << 20
        room = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { _ in }
    }

    func join(_ name: String, host: UInt8) -> RawPeer {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, host])!, port: 50000)
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
        let peer = RawPeer(mine)
        room.accept(theirs)
        peer.send(.hello(.init(name: name)))
        scheduler.run()
        XCTAssertTrue(peer.messages.contains { if case .welcome = $0 { true } else { false } }, name)
        return peer
    }

    func isOpen(_ name: String) -> Bool? {
        room.roster.id(named: name).flatMap { room.members[$0] }?.link.isOpen
    }

    func outbox(_ name: String) -> Int? {
        room.roster.id(named: name).flatMap { room.members[$0] }?.link.connection.bufferedByteCount
    }

    func testMembersThatReadNothingAreDroppedLargestFirstUntilAllOutboxesAreUnderTheLimit() {
        let speaker = join("speaker", host: 1)
        let reader = join("reader", host: 2)
        // Three members that stop reading 8 lines apart: the first holds the most.
        let silent = (3...5).map { join("silent\($0)", host: UInt8($0)) }
        let line = String(repeating: "x", count: 32 << 10)
        for index in 0..<70 {
            if index % 8 == 0, index / 8 < silent.count { silent[index / 8].stream.pauseReading() }
            speaker.send(.text(from: "", to: "", text: "\(index) " + line))
            scheduler.run()
        }
        // Over 3 MiB together at the 41st line (41 + 33 + 25 lines of 32 KiB): the first is
        // dropped; at the 61st (45 + 37) the second; the third alone holds 54 lines.
        XCTAssertEqual(isOpen("silent3"), false, "the one holding the most was dropped")
        XCTAssertEqual(isOpen("silent4"), false, "dropped: with both left the room held more than 3 MiB")
        XCTAssertEqual(isOpen("silent5"), true, "the last one alone is under the room's limit: kept")
        XCTAssertEqual(isOpen("reader"), true)
        XCTAssertEqual(isOpen("speaker"), true)
        let total = room.members.values.filter { $0.link.isOpen }.reduce(0) { $0 + $1.link.connection.bufferedByteCount }
        XCTAssertLessThanOrEqual(total, 3 << 20)
        XCTAssertEqual(reader.messages.count { if case .text = $0 { true } else { false } }, 70, "a member that reads gets every line")
        // What the members are told once they read again: the dropped ones why.
        silent.forEach { $0.stream.resumeReading() }
        scheduler.run()
        func toldTooSlow(_ peer: RawPeer) -> Bool {
            peer.messages.contains { if case .error(ProtocolError.Code.tooSlow.rawValue, let text) = $0 { text.contains("together had more than 3 MiB waiting") } else { false } }
        }
        XCTAssertEqual(silent.map(toldTooSlow), [true, true, false])
        scheduler.advance(by: .seconds(2))
        XCTAssertNil(outbox("silent3"), "gone from the room")
        XCTAssertNil(outbox("silent4"), "gone from the room")
        XCTAssertNotNil(outbox("silent5"))
    }
}
