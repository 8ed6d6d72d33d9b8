import MessagingCore
import XCTest

/// PRESENCE with keys (capability 64), names bound to keys, and text sessions that belong to a key.
final class MemberKeysTests: XCTestCase {
    let keyA = [UInt8](repeating: 0xA1, count: 32)
    let keyB = (0..<32).map { UInt8($0) }

    func testPresenceWithKeysRoundTripsAndHasItsLayout() throws {
        let message = Message.presenceWithKeys(.list, members: [.init(name: "host", key: keyA), .init(name: "plain", key: nil), .init(name: "b", key: keyB)])
        XCTAssertEqual(try Message(decoding: message.frame, memberKeys: true), message)
        XCTAssertEqual(message.frame.type, 0x12, "the frame type of PRESENCE")
        XCTAssertEqual(message.frame.payload, [0, 0, 3] + [0, 4] + Array("host".utf8) + [32] + keyA
                       + [0, 5] + Array("plain".utf8) + [0] + [0, 1, 0x62, 32] + keyB)
        let empty = Message.presenceWithKeys(.left, members: [])
        XCTAssertEqual(try Message(decoding: empty.frame, memberKeys: true), empty)
    }

    func testWithoutTheCapabilityPresenceIsVersion1() throws {
        let plain = Message.presence(.joined, names: ["alice", "bob"])
        XCTAssertEqual(try Message(decoding: plain.frame), plain)
        XCTAssertEqual(plain.frame.payload, [1, 0, 2, 0, 5] + Array("alice".utf8) + [0, 3] + Array("bob".utf8))
        // The same bytes read as keyed: "alice" followed by a key length of 0, then "\0\3bob" is not a name.
        XCTAssertThrowsError(try Message(decoding: plain.frame, memberKeys: true))
        // Keyed bytes read as version 1 do not pass for names either.
        let keyed = Message.presenceWithKeys(.joined, members: [.init(name: "alice", key: keyA)])
        XCTAssertThrowsError(try Message(decoding: keyed.frame))
    }

    func testAKeyLengthOtherThan0Or32IsMalformed() {
        for length: UInt8 in [1, 16, 31, 33, 255] {
            let payload: [UInt8] = [0, 0, 1, 0, 1, 0x61, length] + [UInt8](repeating: 9, count: Int(length))
            XCTAssertThrowsError(try Message(decoding: Frame(type: 0x12, payload: payload), memberKeys: true), "\(length)") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .malformedFrame)
                XCTAssertEqual((error as? ProtocolError)?.message, "PRESENCE key length \(length) is neither 0 nor 32")
            }
        }
        // A key cut short by the end of the frame.
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x12, payload: [0, 0, 1, 0, 1, 0x61, 32, 1, 2]), memberKeys: true))
        // A key that is not 32 bytes is sent as none.
        XCTAssertNil(Message.PresenceMember(name: "a", key: [1, 2, 3]).key)
    }

    func testLongKeyedPresenceListsAreSplitIntoFramesThatFit() throws {
        let members = (0..<10_000).map { Message.PresenceMember(name: String(repeating: "m", count: 200) + String($0), key: $0 % 3 == 0 ? nil : keyB) }
        let messages = Message.presenceWithKeys(.list, splitting: members)
        XCTAssertGreaterThan(messages.count, 1)
        var all: [Message.PresenceMember] = []
        for message in messages {
            XCTAssertLessThanOrEqual(message.frame.payload.count, Frame.maximumPayload)
            guard case .presenceWithKeys(.list, let part) = try Message(decoding: message.frame, memberKeys: true) else { return XCTFail() }
            all += part
        }
        XCTAssertEqual(all, members)
        XCTAssertEqual(Message.presenceWithKeys(.left, splitting: []), [.presenceWithKeys(.left, members: [])])
    }

    func testTheCapabilityIsBit64AndAdvertised() {
        XCTAssertEqual(Message.Capabilities.memberKeys.rawValue, 64)
        XCTAssertTrue(Message.Capabilities.all.contains(.memberKeys))
    }

    func testANameBelongsToItsFirstKey() throws {
        let now = ContinuousClock.now
        var bindings = NameBindings()
        let alice = MemberName.comparisonKey("alice")
        try bindings.bind(alice, to: "A", host: "h1", at: now)
        try bindings.bind(MemberName.comparisonKey("ALICE"), to: "B", host: "h2", at: now) // already bound: stays A's
        XCTAssertEqual(bindings.owner(of: alice), "A")
        XCTAssertFalse(bindings.isTaken(alice, by: "A"))
        XCTAssertTrue(bindings.isTaken(alice, by: "B"))
        XCTAssertTrue(bindings.isTaken(alice, by: nil), "no key takes no bound name")
        XCTAssertFalse(bindings.isTaken(MemberName.comparisonKey("bob"), by: nil))
        XCTAssertEqual(bindings.count, 1)
    }

    func testBindingsAreBoundedPerHostAndPerRoom() throws {
        let now = ContinuousClock.now
        var bindings = NameBindings(capacity: 5, perHost: 3)
        for number in 0..<3 { try bindings.bind("n\(number)", to: "K\(number)", host: "h1", at: now) }
        XCTAssertThrowsError(try bindings.bind("n3", to: "K3", host: "h1", at: now)) { XCTAssertEqual($0 as? NameBindings.Refusal, .hostFull) }
        try bindings.bind("n0", to: "K0", host: "h1", at: now) // its own: nothing new
        try bindings.bind("m0", to: "K9", host: "h2", at: now)
        try bindings.bind("m1", to: "K9", host: "h2", at: now)
        XCTAssertThrowsError(try bindings.bind("m2", to: "K9", host: "h3", at: now)) { XCTAssertEqual($0 as? NameBindings.Refusal, .roomFull) }
        XCTAssertEqual(bindings.count, 5)
        XCTAssertEqual(NameBindings().capacity, 4096)
        XCTAssertEqual(NameBindings().perHost, 64)
    }

    func testANameHeldBrieflyIsLetGoWhenItsMemberLeaves() throws {
        let start = ContinuousClock.now
        var bindings = NameBindings(settling: .seconds(60))
        try bindings.bind("brief", to: "K1", host: "h1", at: start)
        bindings.left("brief", key: "K1", at: start + .seconds(59))
        XCTAssertNil(bindings.owner(of: "brief"))
        try bindings.bind("kept", to: "K2", host: "h1", at: start)
        bindings.left("kept", key: "K2", at: start + .seconds(60))
        XCTAssertEqual(bindings.owner(of: "kept"), "K2")
        try bindings.bind("kept", to: "K2", host: "h1", at: start + .seconds(100))
        bindings.left("kept", key: "K2", at: start + .seconds(101))
        XCTAssertEqual(bindings.owner(of: "kept"), "K2", "once settled, a short visit keeps it")
        XCTAssertEqual(bindings.count, 1)
    }

    func testAtTheBoundsTheNewestAwayBindingIsLetGoFirst() throws {
        let now = ContinuousClock.now
        var bindings = NameBindings(capacity: 4, perHost: 3, settling: .zero)
        try bindings.bind("old", to: "K0", host: "h1", at: now)
        bindings.left("old", key: "K0", at: now)
        try bindings.bind("a", to: "K1", host: "h2", at: now)
        try bindings.bind("b", to: "K2", host: "h2", at: now)
        try bindings.bind("c", to: "K3", host: "h2", at: now)
        bindings.left("b", key: "K2", at: now)
        bindings.left("c", key: "K3", at: now)
        bindings.left("c", key: "K9", at: now) // not its owner: changes nothing
        XCTAssertEqual(try bindings.bind("d", to: "K2", host: "h2", at: now), "b", "h2 is full: the asking key's own away name goes first")
        XCTAssertEqual(try bindings.bind("x", to: "K8", host: "h2", at: now), "c", "then the address's newest away name")
        XCTAssertThrowsError(try bindings.bind("y", to: "K9", host: "h2", at: now), "h2's names are all present") {
            XCTAssertEqual($0 as? NameBindings.Refusal, .hostFull)
        }
        bindings.left("a", key: "K1", at: now)
        XCTAssertEqual(try bindings.bind("e", to: "K5", host: "h3", at: now), "a", "the room is full: its newest away name goes, not the oldest")
        XCTAssertEqual(bindings.owner(of: "old"), "K0")
        try bindings.bind("old", to: "K0", host: "h1", at: now) // back: present again
        XCTAssertThrowsError(try bindings.bind("f", to: "K6", host: "h3", at: now)) { XCTAssertEqual($0 as? NameBindings.Refusal, .roomFull, "all present") }
        XCTAssertEqual(bindings.count, 4)
    }

    func testARosterSkipsNamesItIsToldAreTaken() {
        var roster = Roster()
        let taken: Set<String> = [MemberName.comparisonKey("alice"), MemberName.comparisonKey("alice-2")]
        XCTAssertEqual(roster.availableName(requested: "Alice", isTaken: taken.contains), "Alice-3")
        XCTAssertEqual(roster.count, 0, "availableName joins nobody")
        XCTAssertEqual(roster.join(id: 1, requested: "Alice", isTaken: taken.contains), "Alice-3")
        XCTAssertEqual(roster.entries.map(\.id), [1])
    }

    func testASessionBelongsToItsOwnersKey() throws {
        var sessions = TextSessions()
        try sessions.attach(7, owner: "A", next: 0, holder: 1, address: "h")
        XCTAssertTrue(sessions.accept(0, in: 7, owner: "A"))
        // Another key's session 7, while A holds its own: a session of its own, not "in use".
        try sessions.attach(7, owner: "B", next: 0, holder: 2, address: "h")
        XCTAssertTrue(sessions.accept(0, in: 7, owner: "B"))
        XCTAssertTrue(sessions.accept(1, in: 7, owner: "B"))
        XCTAssertFalse(sessions.accept(5, in: 7, owner: "C"), "nobody opened C's session 7")
        XCTAssertFalse(sessions.accept(5, in: 7), "nor the session 7 of members without a key")
        sessions.detach(7, owner: "B", holder: 1) // not B's holder: nothing happens
        XCTAssertThrowsError(try sessions.attach(7, owner: "B", next: 0, holder: 3, address: "h")) { XCTAssertEqual($0 as? TextSessions.Refusal, .inUse) }
        sessions.detach(7, owner: "A", holder: 1)
        try sessions.attach(7, owner: "A", next: 0, holder: 4, address: "h")
        XCTAssertFalse(sessions.accept(0, in: 7, owner: "A"), "A's line 0 was relayed")
        XCTAssertTrue(sessions.accept(1, in: 7, owner: "A"), "B's lines did not count in A's session")
    }
}
