@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Members with keys (in-memory streams that report a secure session, as a TLS link would):
/// names bound to keys, a key replacing its own old link, text sessions and partial files
/// that belong to a key, and PRESENCE with keys.
final class RoomServerKeysTests: XCTestCase {
    let scheduler = ManualScheduler()
    var server: RoomServer!
    var events: [RoomServer.Event] = []
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        makeServer()
    }

    func makeServer(_ configure: (inout RoomServer.Options) -> Void = { _ in }) {
        var options = RoomServer.Options(name: "host")
        options.ownKey = Self.key(200)
        // Names stay bound at once here; testMembersWhoLeaveWithinAMinuteBindNothing waits.
        options.boundNameSettling = .zero
        configure(&options)
        server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [unowned self] in events.append($0) }
    }

    /// A key whose 32 bytes are `seed` and `extra`.
    static func key(_ seed: UInt8, _ extra: UInt8 = 0) -> PublicKeyFingerprint {
        PublicKeyFingerprint(bytes: [seed, extra] + [UInt8](repeating: 7, count: 30))!
    }

    static func session(_ key: PublicKeyFingerprint) -> SecureSession {
        SecureSession(peerKey: key, safetyCode: "123 456 789 0" + String(key.bytes[0] % 100 / 10) + String(key.bytes[0] % 10))
    }

    /// A member speaking raw frames from 10.0.0.`host`, with `key` (nil: plaintext); it says
    /// HELLO and the room runs until nothing is left to do.
    func join(_ name: String, key: PublicKeyFingerprint?, host: UInt8 = 1, capabilities: Message.Capabilities = .beforeStreamedFiles) -> RawPeer {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, host])!, port: 50000)
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
        theirs.secureSession = key.map(Self.session)
        let peer = RawPeer(mine)
        server.accept(theirs)
        peer.send(.hello(.init(capabilities: capabilities, name: name)))
        scheduler.run()
        return peer
    }

    func leave(_ peer: RawPeer) {
        peer.stream.close()
        scheduler.run()
    }

    func welcome(of peer: RawPeer) -> String? {
        peer.messages.lazy.compactMap { if case .welcome(let name) = $0 { name } else { nil } }.first
    }

    func errors(of peer: RawPeer) -> [String] {
        peer.messages.compactMap { if case .error(let code, let text) = $0 { "\(ProtocolError.Code(rawValue: code)?.name ?? "\(code)"): \(text)" } else { nil } }
    }

    func presence(of peer: RawPeer) -> [Message] {
        peer.messages.filter {
            switch $0 {
            case .presence, .presenceWithKeys: true
            default: false
            }
        }
    }

    func testANameBelongsToTheFirstKeyThatJoinedWithItAlsoWhileItIsAway() {
        let alice = join("alice", key: Self.key(1))
        XCTAssertEqual(welcome(of: alice), "alice")
        let thief = join("ALICE", key: Self.key(2))
        XCTAssertEqual(welcome(of: thief), "ALICE-2", "the owner is here")
        leave(alice)
        let later = join("alice", key: Self.key(3))
        XCTAssertEqual(welcome(of: later), "alice-3", "the owner is away; -2 is bound to the second key")
        let plain = join("Alice", key: nil)
        XCTAssertEqual(welcome(of: plain), "Alice-4", "a member without a key takes no bound name")
        leave(thief)
        let plainAgain = join("alice-2", key: nil)
        XCTAssertEqual(welcome(of: plainAgain), "alice-2-2")
        let back = join("Alice", key: Self.key(1))
        XCTAssertEqual(welcome(of: back), "Alice", "its owner gets it back, in any spelling the roster takes for the same")
    }

    func testAPlaintextMemberBindsNothing() {
        let plain = join("carol", key: nil)
        XCTAssertEqual(welcome(of: plain), "carol")
        leave(plain)
        XCTAssertEqual(welcome(of: join("carol", key: Self.key(5))), "carol", "the name was not bound: a key may take it")
    }

    func testTheSameKeyGetsItsNameBackAndReplacesItsOldLink() {
        let old = join("alice", key: Self.key(1))
        let bob = join("bob", key: Self.key(2), host: 2)
        let bobPresence = presence(of: bob).count
        old.send(.session(id: 9, next: 0))
        scheduler.run()
        let new = join("alice", key: Self.key(1), host: 3)
        XCTAssertEqual(welcome(of: new), "alice")
        XCTAssertTrue(old.messages.contains(.goodbye(reason: "replaced by a new connection of the same key")))
        XCTAssertNotNil(old.stream.closeReason, "the old link is closed")
        XCTAssertEqual(presence(of: bob).count, bobPresence, "the room sees no one leave or join")
        XCTAssertEqual(server.names, ["host", "bob", "alice"])
        let lines = events.compactMap { event -> String? in
            switch event {
            case .joined(let id, let name, _, let session): "joined #\(id) \(name) \(session?.peerKey.short ?? "-")"
            case .left(let id, let name, let reason): "left #\(id) \(name): \(reason)"
            default: nil
            }
        }
        XCTAssertEqual(lines, ["joined #1 alice \(Self.key(1).short)", "joined #2 bob \(Self.key(2).short)",
                               "left #1 alice: replaced by a new connection of the same key", "joined #3 alice \(Self.key(1).short)"])
        // The text session the old link held is free for the new one.
        new.send(.session(id: 9, next: 0))
        new.send(.text(from: "", to: "", text: "hello again"))
        scheduler.run()
        XCTAssertEqual(errors(of: new), [])
        XCTAssertTrue(bob.messages.contains(.text(from: "alice", to: "", text: "hello again")))
    }

    func testAnotherKeyStillGetsAVariantWhileTheOwnerIsReplaced() {
        _ = join("alice", key: Self.key(1))
        XCTAssertEqual(welcome(of: join("alice", key: Self.key(9))), "alice-2")
        XCTAssertEqual(server.names, ["host", "alice", "alice-2"])
    }

    func testOneKeyMayHoldSeveralNames() {
        let work = join("alice", key: Self.key(1))
        let home = join("alice-home", key: Self.key(1))
        XCTAssertEqual(welcome(of: work), "alice")
        XCTAssertEqual(welcome(of: home), "alice-home")
        XCTAssertNil(work.stream.closeReason)
        XCTAssertEqual(server.names, ["host", "alice", "alice-home"])
    }

    func testAnAddressBindsAtMost64NamesAndLetsGoOfItsNewestAwayOneFirst() {
        let present = (0..<63).map { join("m\($0)", key: Self.key(1, UInt8($0))) }
        leave(join("m63", key: Self.key(1, 63)))
        XCTAssertEqual(welcome(of: join("one-more", key: Self.key(2), host: 1)), "one-more", "m63's binding (away, same address) made room")
        XCTAssertEqual(welcome(of: join("m63", key: Self.key(7), host: 2)), "m63", "that name is free again")
        let refused = join("and-another", key: Self.key(3), host: 1)
        XCTAssertNil(welcome(of: refused))
        XCTAssertEqual(errors(of: refused),
                       ["server-full: 64 names are bound to keys of members from 10.0.0.1, all in the room, the most one address may bind: join with a name your key already has here, or once one of them left"])
        XCTAssertEqual(welcome(of: join("m5", key: Self.key(1, 5), host: 1)), "m5", "a key keeps its own name")
        XCTAssertEqual(welcome(of: join("plain", key: nil, host: 1)), "plain", "a plaintext member binds nothing")
        XCTAssertEqual(present.count, 63)
    }

    func testMembersWhoLeaveWithinAMinuteBindNothing() {
        makeServer { $0.boundNameSettling = .seconds(20) }
        leave(join("brief", key: Self.key(1)))
        XCTAssertEqual(welcome(of: join("brief", key: Self.key(2), host: 2)), "brief", "a name held a moment was let go")
        let stayed = join("stayed", key: Self.key(3), host: 3)
        scheduler.advance(by: .seconds(21))
        XCTAssertEqual(welcome(of: stayed), "stayed")
        leave(stayed)
        XCTAssertEqual(welcome(of: join("stayed", key: Self.key(4), host: 4)), "stayed-2", "a name held 20 s stays its key's")
    }

    func testAnAddressFullOfNamesTouchesNoOtherAddresssNames() {
        makeServer { $0.maximumBoundNamesPerHost = 3 }
        leave(join("victim", key: Self.key(1), host: 9))
        leave(join("b1", key: Self.key(2)))
        leave(join("b2", key: Self.key(2)))
        _ = join("b3", key: Self.key(2))
        XCTAssertEqual(welcome(of: join("b4", key: Self.key(2))), "b4", "10.0.0.1 makes room with its own newest away name")
        XCTAssertEqual(welcome(of: join("victim", key: Self.key(2))), "victim-2", "but never with another address's")
        XCTAssertEqual(welcome(of: join("victim", key: Self.key(1), host: 9)), "victim")
    }

    func testAPeerChurningNamesCannotLockTheRoomOrTakeAnOlderMembersName() {
        leave(join("alice", key: Self.key(200), host: 250)) // an early member, away now
        for host in 0..<64 {
            for number in 0..<64 where !(host == 63 && number == 63) {
                leave(join("m\(number)", key: Self.key(UInt8(host), UInt8(number)), host: UInt8(host + 1)))
            }
        }
        // 4,096 bound, all away: a newcomer lets go of the newest (the churner's), not alice's.
        XCTAssertEqual(welcome(of: join("newcomer", key: Self.key(99, 99), host: 100)), "newcomer")
        XCTAssertEqual(welcome(of: join("alice", key: Self.key(99, 98), host: 100)), "alice-2", "alice's name stays hers")
        XCTAssertEqual(welcome(of: join("alice", key: Self.key(200), host: 251)), "alice", "and she gets it back")
        XCTAssertEqual(welcome(of: join("M7", key: Self.key(0, 7), host: 200)), "M7", "a key joins under its own name, from any host")
    }

    func testAnotherKeyCannotReplayOrTakeOverATextSession() {
        let bob = join("bob", key: Self.key(2), host: 2)
        let alice = join("alice", key: Self.key(1))
        alice.send(.session(id: 7, next: 0))
        alice.send(.text(from: "", to: "", text: "one"))
        scheduler.run()
        // While alice holds session 7, another key's session 7 is a session of its own.
        let mallory = join("mallory", key: Self.key(3), host: 3)
        mallory.send(.session(id: 7, next: 0))
        mallory.send(.text(from: "", to: "", text: "one"))
        mallory.send(.text(from: "", to: "", text: "two"))
        scheduler.run()
        XCTAssertEqual(errors(of: mallory), [])
        leave(alice)
        leave(mallory)
        // Mallory again, replaying session 7 from the start: its own lines, each once.
        let replay = join("mallory", key: Self.key(3), host: 3)
        replay.send(.session(id: 7, next: 0))
        replay.send(.text(from: "", to: "", text: "one"))
        replay.send(.text(from: "", to: "", text: "two"))
        scheduler.run()
        // Alice reconnects and sends her line 0 again (unacknowledged) and line 1: the
        // repeat is dropped, line 1 is not taken for one mallory already sent.
        let aliceAgain = join("alice", key: Self.key(1))
        aliceAgain.send(.session(id: 7, next: 0))
        aliceAgain.send(.text(from: "", to: "", text: "one"))
        aliceAgain.send(.text(from: "", to: "", text: "two"))
        scheduler.run()
        let heard = bob.messages.compactMap { if case .text(let from, _, let text) = $0 { "\(from): \(text)" } else { nil } }
        XCTAssertEqual(heard, ["alice: one", "mallory: one", "mallory: two", "alice: two"])
        XCTAssertTrue(aliceAgain.messages.contains(.acknowledged(through: 2)))
    }

    func testAPlaintextMembersSessionIsNotAKeysSession() {
        let bob = join("bob", key: nil, host: 2)
        let plain = join("plain", key: nil)
        plain.send(.session(id: 7, next: 0))
        scheduler.run()
        let keyed = join("keyed", key: Self.key(1))
        keyed.send(.session(id: 7, next: 0))
        keyed.send(.text(from: "", to: "", text: "mine"))
        scheduler.run()
        XCTAssertEqual(errors(of: keyed), [], "session 7 of no key is in use; the key's own session 7 is not")
        XCTAssertTrue(bob.messages.contains(.text(from: "keyed", to: "", text: "mine")))
    }

    func testAnotherKeyCannotResumeOrCutShortAPartialFile() throws {
        makeServer { $0.inbox = try? Inbox(directory: self.directory.path + "/inbox") }
        let content: [UInt8] = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let hash = SHA256()
        hash.update(content)
        let offer = Message.FileOffer(id: 1, size: UInt64(content.count), digest: hash.finish(), name: "notes.bin")
        func accepted(_ peer: RawPeer) -> UInt64? {
            peer.messages.lazy.compactMap { if case .fileAccept(1, let offset) = $0 { offset } else { nil } }.first
        }

        let alice = join("alice", key: Self.key(1))
        alice.send(.fileOffer(offer))
        scheduler.run()
        XCTAssertEqual(accepted(alice), 0)
        alice.send(.fileChunk(id: 1, data: ArraySlice(content[0..<100_000])))
        scheduler.run()
        leave(alice)

        // Another key, from the same host: its own partial, from 0; what it sends (a shorter
        // start of other bytes) does not touch alice's.
        let mallory = join("mallory", key: Self.key(2))
        mallory.send(.fileOffer(offer))
        scheduler.run()
        XCTAssertEqual(accepted(mallory), 0, "mallory learns nothing of alice's data and does not resume it")
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 0, count: 10)))
        scheduler.run()
        leave(mallory)

        // Alice from another host: her key resumes where she was.
        let aliceAgain = join("alice", key: Self.key(1), host: 9)
        aliceAgain.send(.fileOffer(offer))
        scheduler.run()
        XCTAssertEqual(accepted(aliceAgain), 100_000)
        aliceAgain.send(.fileChunk(id: 1, data: ArraySlice(content[100_000...])))
        aliceAgain.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertTrue(aliceAgain.messages.contains { if case .fileResult(1, .stored, _) = $0 { true } else { false } }, "\(aliceAgain.messages.suffix(3))")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/inbox/notes.bin"), content)
    }

    func testPresenceCarriesKeysForMembersThatAdvertiseThem() {
        let alice = join("alice", key: Self.key(1))
        let old = join("old", key: Self.key(2), host: 2, capabilities: [.rooms, .files, .resume, .acknowledgedText])
        let plain = join("plain", key: nil, host: 3)
        XCTAssertEqual(presence(of: alice).first, .presenceWithKeys(.list, members: [.init(name: "host", key: Self.key(200).bytes),
                                                                                  .init(name: "alice", key: Self.key(1).bytes)]))
        XCTAssertEqual(presence(of: old).first, .presence(.list, names: ["host", "alice", "old"]))
        XCTAssertEqual(presence(of: plain).first, .presenceWithKeys(.list, members: [
            .init(name: "host", key: Self.key(200).bytes), .init(name: "alice", key: Self.key(1).bytes),
            .init(name: "old", key: Self.key(2).bytes), .init(name: "plain", key: nil),
        ]))
        XCTAssertEqual(Array(presence(of: alice).dropFirst()), [
            .presenceWithKeys(.joined, members: [.init(name: "old", key: Self.key(2).bytes)]),
            .presenceWithKeys(.joined, members: [.init(name: "plain", key: nil)]),
        ])
        XCTAssertEqual(Array(presence(of: old).dropFirst()), [.presence(.joined, names: ["plain"])])
        leave(plain)
        XCTAssertEqual(presence(of: alice).last, .presenceWithKeys(.left, members: [.init(name: "plain", key: nil)]))
        alice.send(.who)
        scheduler.run()
        XCTAssertEqual(presence(of: alice).last, .presenceWithKeys(.list, members: [
            .init(name: "host", key: Self.key(200).bytes), .init(name: "alice", key: Self.key(1).bytes), .init(name: "old", key: Self.key(2).bytes),
        ]))
        for peer in [alice, old] { XCTAssertEqual(peer.faults, []) }
    }

    func testAPlaintextServerSendsNoKeyForItself() {
        makeServer { $0.ownKey = nil }
        let alice = join("alice", key: Self.key(1))
        XCTAssertEqual(presence(of: alice).first, .presenceWithKeys(.list, members: [.init(name: "host", key: nil),
                                                                                  .init(name: "alice", key: Self.key(1).bytes)]))
    }

    func testThePublishersWhoShowsShortKeys() {
        _ = join("alice", key: Self.key(1))
        _ = join("plain", key: nil)
        server.perform(.who)
        guard case .note(let line)? = events.last else { return XCTFail("\(events)") }
        XCTAssertEqual(line, "in the room: host, alice (key \(Self.key(1).short)), plain")
    }

    func testTheJoinedEventCarriesTheSecureSession() {
        _ = join("alice", key: Self.key(1))
        _ = join("plain", key: nil)
        var sessions: [SecureSession?] = []
        for case .joined(_, _, _, let session) in events { sessions.append(session) }
        XCTAssertEqual(sessions, [Self.session(Self.key(1)), nil])
    }
}
