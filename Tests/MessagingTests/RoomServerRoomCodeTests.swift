@testable import Messaging
import MessagingCore
import MessagingTesting
import RoomCodeExchange
import TransportCore
import XCTest

/// The publisher's side of the room-code exchange, against a raw peer that runs CPace itself
/// on in-memory streams that report a TLS session: the right code, a wrong one, a relay (two
/// sessions), frames out of order, a room without a code, plaintext, and a peer that stops.
final class RoomServerRoomCodeTests: XCTestCase {
    let scheduler = ManualScheduler()
    var server: RoomServer!
    var events: [RoomServer.Event] = []
    let code = try! RoomCode(parsing: "4829-1530-7719")
    let roomKey = RoomServerKeysTests.key(200)
    let sessionID = [UInt8](repeating: 5, count: 32)

    override func setUp() {
        makeServer(code: code)
    }

    let directory = TestDirectory()

    /// An in-memory members file.
    final class TestDirectory: MemberDirectory, @unchecked Sendable {
        var listed: [PublicKeyFingerprint: MemberListing] = [:]
        func listing(for key: PublicKeyFingerprint) -> MemberListing? { listed[key] }
        func holder(ofName name: String) -> PublicKeyFingerprint? {
            listed.first { $0.value.name.map { MemberName.same($0, name) } ?? false }?.key
        }
        func add(_ key: PublicKeyFingerprint, name: String) -> String? {
            listed[key] = MemberListing(name: name)
            return nil
        }
    }

    func makeServer(code: RoomCode?, admission: Admission = .open) {
        var options = RoomServer.Options(name: "host")
        options.ownKey = roomKey
        options.roomCode = code
        options.admission = admission
        options.members = directory
        options.handshakeTimeout = .seconds(10)
        server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [unowned self] in events.append($0) }
    }

    /// A raw member with `key` whose stream reports a TLS session with `sessionID` as the
    /// server sees it (nil: plaintext); it has read the server's HELLO.
    func connect(key: PublicKeyFingerprint, serverSessionID: [UInt8]? = nil, plaintext: Bool = false) -> RawPeer {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 9])!, port: 50000)
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
        if !plaintext {
            theirs.secureSession = SecureSession(peerKey: key, safetyCode: "000 000 000 000", localKey: roomKey,
                                                 roomCodeSessionID: serverSessionID ?? sessionID)
        }
        let peer = RawPeer(mine)
        server.accept(theirs)
        scheduler.run()
        return peer
    }

    func initiator(_ code: RoomCode, key: PublicKeyFingerprint) throws -> CPace.Initiator {
        try CPace.Initiator(code: code, channelIdentifier: CPace.channelIdentifier(initiatorKey: key, responderKey: roomKey),
                            sessionID: sessionID, associatedData: Message.RoomCodeSizes.associatedData)
    }

    func reply(of peer: RawPeer) -> (share: [UInt8], tag: [UInt8], data: [UInt8])? {
        peer.messages.lazy.compactMap { if case .codeReply(let share, let tag, let data) = $0 { (share, tag, data) } else { nil } }.first
    }

    func errorCodes(of peer: RawPeer) -> [ProtocolError.Code?] {
        peer.messages.compactMap { if case .error(let code, _) = $0 { ProtocolError.Code(rawValue: code) } else { nil } }
    }

    var failures: [String] {
        events.compactMap { if case .roomCodeFailed(let peer, let key, let reason) = $0 { "\(peer) \(key?.short ?? "-") \(reason)" } else { nil } }
    }

    func testTheRightCodePassesAndTheMemberJoins() throws {
        let key = RoomServerKeysTests.key(1)
        let peer = connect(key: key)
        let exchange = try initiator(code, key: key)
        peer.send(.codeStart(share: exchange.share, associatedData: exchange.associatedData))
        scheduler.run()
        let answer = try XCTUnwrap(reply(of: peer))
        XCTAssertEqual(answer.data, Message.RoomCodeSizes.associatedData)
        let ownTag = try exchange.receive(responderShare: answer.share, responderAssociatedData: answer.data)
        XCTAssertNoThrow(try exchange.confirm(responderTag: answer.tag), "the room proved the code")
        peer.send(.codeConfirm(tag: ownTag))
        peer.send(.hello(.init(name: "alice")))
        scheduler.run()
        XCTAssertTrue(peer.messages.contains(.welcome(name: "alice")))
        XCTAssertEqual(errorCodes(of: peer), [])
        XCTAssertEqual(failures, [])
        // After HELLO the exchange cannot run again.
        peer.send(.codeStart(share: exchange.share, associatedData: []))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: peer), [.codeExchange])
        XCTAssertNotNil(peer.closeReason)
    }

    func testAWrongCodeFailsTheMembersCheckAndAForgedTagIsRefused() throws {
        let key = RoomServerKeysTests.key(2)
        let peer = connect(key: key)
        var wrong = try RoomCode.generate()
        while wrong == code { wrong = try RoomCode.generate() }
        let exchange = try initiator(wrong, key: key)
        peer.send(.codeStart(share: exchange.share, associatedData: []))
        scheduler.run()
        let answer = try XCTUnwrap(reply(of: peer))
        let ownTag = try exchange.receive(responderShare: answer.share, responderAssociatedData: answer.data)
        XCTAssertThrowsError(try exchange.confirm(responderTag: answer.tag), "the member sees the wrong code first")
        // A hostile member sends its tag all the same: the room refuses it.
        peer.send(.codeConfirm(tag: ownTag))
        peer.send(.hello(.init(name: "mallory")))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: peer), [.wrongRoomCode])
        XCTAssertFalse(peer.messages.contains { if case .welcome = $0 { true } else { false } })
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures[0].hasPrefix("10.0.0.9:50000 \(key.short) "), failures[0])
    }

    func testTheMembersReportOfAWrongCodeAndALeaveMidwayAreFailedAttempts() throws {
        let key = RoomServerKeysTests.key(3)
        let reporter = connect(key: key)
        reporter.send(.codeStart(share: try initiator(code, key: key).share, associatedData: []))
        scheduler.run()
        reporter.send(.error(code: ProtocolError.Code.wrongRoomCode.rawValue, message: "the room code did not match"))
        scheduler.run()
        let leaver = connect(key: key)
        leaver.send(.codeStart(share: try initiator(code, key: key).share, associatedData: []))
        scheduler.run()
        leaver.stream.close()
        scheduler.run()
        XCTAssertEqual(failures.count, 2, "\(failures)")
    }

    func testARelayWithTwoSessionsFailsEvenForwardingEveryByte() throws {
        // The relay holds one TLS session with the member and another with the room: the
        // session ids differ, so the room's tag cannot check out at the member.
        let key = RoomServerKeysTests.key(4)
        let peer = connect(key: key, serverSessionID: [UInt8](repeating: 6, count: 32))
        let exchange = try initiator(code, key: key)
        peer.send(.codeStart(share: exchange.share, associatedData: []))
        scheduler.run()
        let answer = try XCTUnwrap(reply(of: peer))
        _ = try exchange.receive(responderShare: answer.share, responderAssociatedData: answer.data)
        XCTAssertThrowsError(try exchange.confirm(responderTag: answer.tag)) { error in
            XCTAssertEqual((error as? RoomCodeError)?.code, .confirmationFailed)
        }
    }

    func testAPeerThatStopsMidwayIsCutOffByTheHandshakeTimeout() throws {
        let key = RoomServerKeysTests.key(5)
        let peer = connect(key: key)
        peer.send(.codeStart(share: try initiator(code, key: key).share, associatedData: []))
        scheduler.run()
        XCTAssertNotNil(reply(of: peer))
        scheduler.advance(by: .seconds(11))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: peer), [.handshakeTimeout])
        XCTAssertNotNil(peer.closeReason)
        XCTAssertEqual(failures.count, 1)
    }

    func testOutOfOrderFramesAndUnusableSharesAreCleanErrors() throws {
        let key = RoomServerKeysTests.key(6)
        let share = try initiator(code, key: key).share
        let cases: [(String, [Message])] = [
            ("confirm first", [.codeConfirm(tag: [UInt8](repeating: 0, count: 64))]),
            ("start twice", [.codeStart(share: share, associatedData: []), .codeStart(share: share, associatedData: [])]),
            ("reply from a member", [.codeReply(share: share, tag: [UInt8](repeating: 0, count: 64), associatedData: [])]),
            ("hello midway", [.codeStart(share: share, associatedData: []), .hello(.init(name: "x"))]),
            ("identity share", [.codeStart(share: [UInt8](repeating: 0, count: 32), associatedData: [])]),
            ("not an encoding", [.codeStart(share: [UInt8](repeating: 0xFF, count: 32), associatedData: [])]),
        ]
        for (what, messages) in cases {
            let peer = connect(key: key)
            for message in messages { peer.send(message) }
            scheduler.run()
            XCTAssertEqual(errorCodes(of: peer), [.codeExchange], what)
            XCTAssertNotNil(peer.closeReason, what)
            XCTAssertFalse(peer.messages.contains { if case .welcome = $0 { true } else { false } }, what)
        }
        // A short frame (one byte of share missing) is refused the same way.
        let peer = connect(key: key)
        peer.send(raw: Frame(type: 0x07, payload: [UInt8](repeating: 1, count: 31)).encoded)
        scheduler.run()
        XCTAssertEqual(errorCodes(of: peer), [.codeExchange])
    }

    func testARoomWithoutACodeAndAPlaintextLinkRefuseTheExchange() throws {
        let key = RoomServerKeysTests.key(7)
        let share = try initiator(code, key: key).share
        let plaintext = connect(key: key, plaintext: true)
        plaintext.send(.codeStart(share: share, associatedData: []))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: plaintext), [.codeExchange])
        makeServer(code: nil)
        let noCode = connect(key: key)
        noCode.send(.codeStart(share: share, associatedData: []))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: noCode), [.codeExchange])
    }

    /// Runs the exchange with `code` and says HELLO as `name`.
    func passCode(_ peer: RawPeer, key: PublicKeyFingerprint, name: String) throws {
        let exchange = try initiator(code, key: key)
        peer.send(.codeStart(share: exchange.share, associatedData: exchange.associatedData))
        scheduler.run()
        let answer = try XCTUnwrap(reply(of: peer))
        let ownTag = try exchange.receive(responderShare: answer.share, responderAssociatedData: answer.data)
        try exchange.confirm(responderTag: answer.tag).wipe()
        peer.send(.codeConfirm(tag: ownTag))
        peer.send(.hello(.init(name: name)))
        scheduler.run()
    }

    func welcome(of peer: RawPeer) -> String? {
        peer.messages.lazy.compactMap { if case .welcome(let name) = $0 { name } else { nil } }.first
    }

    func testWithAdmitCodeANewKeyNeedsTheCodeAndIsThenRemembered() throws {
        makeServer(code: code, admission: .code)
        let key = RoomServerKeysTests.key(8)
        let stranger = connect(key: key)
        stranger.send(.hello(.init(name: "alice")))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: stranger), [.codeRequired])
        XCTAssertNil(welcome(of: stranger))

        let member = connect(key: key)
        try passCode(member, key: key, name: "alice")
        XCTAssertEqual(welcome(of: member), "alice")
        XCTAssertEqual(directory.listed[key], MemberListing(name: "alice"))

        let returning = connect(key: key)
        returning.send(.hello(.init(name: "alice")))
        scheduler.run()
        XCTAssertEqual(welcome(of: returning), "alice", "a remembered key needs no code")

        let plaintext = connect(key: key, plaintext: true)
        plaintext.send(.hello(.init(name: "eve")))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: plaintext), [.codeRequired], "plaintext can never pass a code")
    }

    func testWithAdmitKnownOnlyListedKeysGetInUnderTheirListedName() {
        makeServer(code: nil, admission: .known)
        let listedKey = RoomServerKeysTests.key(9)
        directory.listed[listedKey] = MemberListing(name: "bob")
        let listed = connect(key: listedKey)
        listed.send(.hello(.init(name: "mallory")))
        scheduler.run()
        XCTAssertEqual(welcome(of: listed), "bob", "the file's name wins")

        let unlisted = connect(key: RoomServerKeysTests.key(10))
        unlisted.send(.hello(.init(name: "bob")))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: unlisted), [.notAdmitted])
        XCTAssertNil(welcome(of: unlisted))

        let plaintext = connect(key: listedKey, plaintext: true)
        plaintext.send(.hello(.init(name: "bob")))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: plaintext), [.notAdmitted])
    }

    func testGuessingIsBoundedAndTheRightCodeWorksAfterTheCoolDown() throws {
        let key = RoomServerKeysTests.key(11)
        var wrong = try RoomCode.generate()
        while wrong == code { wrong = try RoomCode.generate() }
        for attempt in 0..<GuessLimiter.Limits().perAddress {
            let guesser = connect(key: key)
            guesser.send(.codeStart(share: try initiator(wrong, key: key).share, associatedData: []))
            scheduler.run()
            XCTAssertNotNil(reply(of: guesser), "guess \(attempt + 1) is answered")
            guesser.send(.error(code: ProtocolError.Code.wrongRoomCode.rawValue, message: "wrong"))
            scheduler.run()
        }
        let refused = connect(key: key)
        refused.send(.codeStart(share: try initiator(code, key: key).share, associatedData: []))
        scheduler.run()
        XCTAssertEqual(errorCodes(of: refused), [.tooManyAttempts], "even the right code waits for the cool-down")
        XCTAssertNil(reply(of: refused))
        scheduler.advance(by: GuessLimiter.Limits().coolDown)
        scheduler.run()
        let member = connect(key: key)
        try passCode(member, key: key, name: "patient")
        XCTAssertEqual(welcome(of: member), "patient")
    }
}

/// Issue 13 review: a name the members file lists belongs to its key from the room's start.
extension RoomServerRoomCodeTests {
    func testAListedNameIsKeptForItsKeyFromTheStart() {
        makeServer(code: nil, admission: .known)
        directory.listed[RoomServerKeysTests.key(9)] = MemberListing(name: "bob")
        directory.listed[RoomServerKeysTests.key(11)] = MemberListing(name: nil)
        // Before bob ever joined, an unnamed listed key asks for his name, then a look-alike.
        let unnamed = connect(key: RoomServerKeysTests.key(11))
        unnamed.send(.hello(.init(name: "BOB")))
        scheduler.run()
        XCTAssertEqual(welcome(of: unnamed), "BOB-2", "bob's listed name is his")
        let bob = connect(key: RoomServerKeysTests.key(9))
        bob.send(.hello(.init(name: "anything")))
        scheduler.run()
        XCTAssertEqual(welcome(of: bob), "bob")
    }

    func testWithAdmitCodeANewKeyDoesNotTakeAListedName() throws {
        makeServer(code: nil, admission: .open)
        directory.listed[RoomServerKeysTests.key(9)] = MemberListing(name: "carol")
        let newcomer = connect(key: RoomServerKeysTests.key(12))
        newcomer.send(.hello(.init(name: "carol")))
        scheduler.run()
        XCTAssertEqual(welcome(of: newcomer), "carol-2")
    }
}
