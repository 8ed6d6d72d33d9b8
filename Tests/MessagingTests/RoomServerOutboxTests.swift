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
    var events: [RoomServer.Event] = []

    override func setUp() {
        var options = RoomServer.Options(name: "host")
        options.roomOutboxLimit = 3 << 20
        room = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [unowned self] in events.append($0) }
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
        // Dropped at once: their bytes are not kept for the ERROR to leave.
        XCTAssertNil(outbox("silent3"), "the one holding the most was dropped")
        XCTAssertNil(outbox("silent4"), "dropped: with both left the room held more than 3 MiB")
        XCTAssertNotNil(outbox("silent5"), "the last one alone is under the room's limit: kept")
        XCTAssertNotNil(outbox("reader"))
        XCTAssertNotNil(outbox("speaker"))
        let total = room.members.values.reduce(0) { $0 + $1.link.connection.bufferedByteCount }
        XCTAssertLessThanOrEqual(total, 3 << 20)
        XCTAssertEqual(reader.messages.count { if case .text = $0 { true } else { false } }, 70, "a member that reads gets every line")
        let dropped = events.compactMap { if case .left(_, let name, let reason) = $0 { "\(name): \(reason)" } else { nil } }
        XCTAssertEqual(dropped, ["silent3", "silent4"].map {
            "\($0): too-slow: the room's members together had more than 3 MiB waiting to be sent, and you were among those holding the most; read faster or rejoin"
        })
    }

    /// Members whose outboxes have not moved for a second go before one that was just sent
    /// more than any of them (a joiner's history, on a slow link): a review's honest joiner was
    /// dropped every time, as the one holding the most.
    func testMembersWhoseOutboxesStalledAreDroppedBeforeOneJustSentMore() {
        let speaker = join("speaker", host: 1)
        let silent = (3...4).map { join("silent\($0)", host: UInt8($0)) }
        for peer in silent { peer.stream.pauseReading() }
        let line = String(repeating: "x", count: 32 << 10)
        for index in 0..<36 {
            speaker.send(.text(from: "", to: "", text: "\(index) " + line))
            scheduler.run()
        }
        scheduler.advance(by: .seconds(2))
        let joiner = join("joiner", host: 9)
        joiner.stream.pauseReading()
        // 44 lines of 32 KiB to the joiner alone: 1.4 MiB, more than either silent member holds,
        // and over 3 MiB with theirs.
        for index in 0..<44 { speaker.send(.text(from: "", to: "joiner", text: "\(index) " + line)) }
        scheduler.run()
        XCTAssertNotNil(outbox("joiner"), "the member whose outbox just filled is kept")
        XCTAssertEqual([outbox("silent3"), outbox("silent4")].count { $0 == nil }, 1, "one stalled member is dropped, and that is enough")
        let total = room.members.values.reduce(0) { $0 + $1.link.connection.heldByteCount }
        XCTAssertLessThanOrEqual(total, 3 << 20)
    }
    /// What all open connections' outboxes hold together, as `boundOutboxes` counts it.
    var held: [Int] { room.members.values.filter { $0.link.isOpen }.map { $0.link.connection.heldByteCount } }

    /// Relayed file data reaches recipients through the relay, not through a line the room
    /// says: it counts all the same. Four recipients that accept a file and stop reading hold
    /// about 1 MiB each (the relay's mark), 4 MiB together: before, nothing added them up.
    func testRelayedFileDataThatMembersDoNotReadCountsTowardTheLimit() {
        let sender = join("mallory", host: 1)
        let recipients = (2...5).map { join("r\($0)", host: UInt8($0)) }
        for (index, recipient) in recipients.enumerated() {
            sender.send(.fileOfferTo(.init(id: UInt32(index + 1), size: 4 << 20, digest: [UInt8](repeating: 7, count: 32), name: "f"),
                                     to: "r\(index + 2)"))
            scheduler.run()
            let offer = recipient.messages.lazy.compactMap { if case .fileOfferFrom(let offer, _, _) = $0 { offer } else { nil } }.first
            guard let offer else { return XCTFail("r\(index + 2) got no offer") }
            recipient.send(.fileAccept(id: offer.id, offset: 0))
            scheduler.run()
            recipient.stream.pauseReading()
        }
        // Mallory sends all the data each credit allows, until no more comes.
        var sent: [UInt32: UInt64] = [:]
        for _ in 0..<16 {
            for case .fileCredit(let id, let through) in sender.messages where through > sent[id, default: 0] {
                sender.send(.fileChunk(id: id, data: ArraySlice(repeating: 1, count: Int(through - sent[id, default: 0]))))
                sent[id] = through
            }
            scheduler.run()
        }
        XCTAssertGreaterThan(sent.values.reduce(0, +), 3 << 20, "the relay let more than the room's limit go to the recipients")
        XCTAssertLessThanOrEqual(held.reduce(0, +), 3 << 20)
        XCTAssertNotNil(outbox("mallory"), "the sender reads: kept")
        let dropped = events.compactMap { if case .left(_, let name, let reason) = $0, reason.hasPrefix("too-slow") { name } else { nil } }
        XCTAssertFalse(dropped.isEmpty, "recipients holding the most were dropped")
        XCTAssertFalse(dropped.contains("mallory"))
    }

    /// Members under the floor are never dropped, but what they are sent still adds up: once
    /// a member holds more than the floor, the room adds all outboxes up after every turn
    /// that queues anything, not only after turns that queue for that member (before, four
    /// members sent 224 KiB each took the room from 2.9 to 3.8 MiB, over its 3 MiB, while
    /// the one over the floor stayed).
    func testWhatMembersUnderTheFloorAreSentCountsWhileAnotherHoldsMore() {
        let speaker = join("speaker", host: 1)
        let hog = join("hog", host: 2)
        let others = (3...6).map { join("m\($0)", host: UInt8($0)) }
        hog.stream.pauseReading()
        for peer in others { peer.stream.pauseReading() }
        let line = String(repeating: "x", count: 32 << 10)
        for index in 0..<92 { speaker.send(.text(from: "", to: "hog", text: "\(index) " + line)) }
        scheduler.run()
        XCTAssertNotNil(outbox("hog"), "2.9 MiB is under the room's 3 MiB")
        for index in 3...6 {
            for _ in 0..<7 { speaker.send(.text(from: "", to: "m\(index)", text: line)) }
        }
        scheduler.run()
        XCTAssertTrue(held.allSatisfy { $0 <= RoomServer.outboxFloor } || held.reduce(0, +) <= 3 << 20,
                      "over the limit while a member holds more than the floor: \(held)")
        XCTAssertNil(outbox("hog"), "the one over the floor is dropped")
        XCTAssertEqual((3...6).compactMap { outbox("m\($0)") }.count, 4, "members under the floor are never dropped")
    }

    /// A member kept over the floor (it reads nothing, but the room is under its limit) does
    /// not make what others are sent a pass over every member: pings, WHO and lines cost the
    /// same as without it (a review's 1,000 members: each ping had cost 5.1x the CPU, the
    /// room adding all outboxes up after every turn). Passes come only once the running count
    /// passes the limit, and then drop who holds the most.
    func testAMemberKeptOverTheFloorDoesNotMakeEachSendAPassOverTheRoom() {
        let speaker = join("speaker", host: 1)
        let kept = join("kept", host: 2)
        let others = (3...12).map { join("m\($0)", host: UInt8($0)) }
        kept.stream.pauseReading()
        let line = String(repeating: "x", count: 32 << 10)
        for index in 0..<40 { speaker.send(.text(from: "", to: "kept", text: "\(index) " + line)) }
        scheduler.run()
        XCTAssertGreaterThan(outbox("kept") ?? 0, RoomServer.outboxFloor)
        let passes = room.outboxChecks
        for round in 0..<200 {
            speaker.send(.ping(token: UInt64(round)))
            others[round % others.count].send(.who)
            speaker.send(.text(from: "", to: "", text: "line \(round)"))
            scheduler.run()
        }
        XCTAssertEqual(room.outboxChecks, passes, "no pass over the room while the running count is under the limit")
        XCTAssertNotNil(outbox("kept"), "1.3 MiB is under the room's 3 MiB: kept")
        // Filling the room past its limit makes one pass, which drops the member kept over the floor.
        for index in 0..<60 { speaker.send(.text(from: "", to: "kept", text: "more \(index) " + line)) }
        scheduler.run()
        XCTAssertGreaterThan(room.outboxChecks, passes)
        XCTAssertNil(outbox("kept"), "over the limit: dropped")
        XCTAssertLessThanOrEqual(room.countedOutboxBytes, 3 << 20)
    }
}
