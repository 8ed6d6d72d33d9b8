import Messaging
import MessagingCore
import MessagingTesting
import RoomCodeExchange
import XCTest

/// A room that has not proved the room code (or not welcomed us yet) gets nothing from the
/// member: its text, presence, history and files are not shown or stored, and its PINGs and
/// offers are not answered. With a code, any such frame ends the join with `code-exchange`.
extension RoomClientRoomCodeTests {
    /// One of each frame kind a room may not send before it proved the code, by name.
    static let impostorFrames: [(String, Message)] = [
        ("TEXT", .text(from: "room", to: "", text: "hi from the impostor")),
        ("PRESENCE", .presence(.list, names: ["room", "mallory"])),
        ("HISTORY", .history(time: 1, from: "room", text: "old")),
        ("FILE_OFFER", .fileOffer(.init(id: 1, size: 4, digest: [UInt8](repeating: 0, count: 32), name: "evil.txt"))),
        ("FILE_CHUNK", .fileChunk(id: 1, data: [1, 2, 3, 4])),
        ("FILE_END", .fileEnd(id: 1, digest: nil)),
        ("PING", .ping(token: 7)),
        ("PONG", .pong(token: 7)),
        ("ACK", .acknowledged(through: 3)),
        ("WHO", .who),
    ]

    /// What the member showed that only a room it is in may make it show.
    var shown: [String] {
        events.withLock { $0.compactMap { event -> String? in
            switch event {
            case .text, .history, .presence, .file, .joined: "\(event)"
            default: nil
            }
        } }
    }

    /// Runs a member with `code` against a raw room that sends its HELLO (when `afterHello`),
    /// then `frame`; returns how the join ended and what the member sent back.
    func impostor(sends frame: Message, code: RoomCode?, afterHello: Bool, thenWelcome: Bool = false) async -> (Result<Void, any Error>, [Message]) {
        events.withLock { $0 = [] }
        let raw = Locked<RawPeer?>(nil)
        let client = makeClient(code: code, server: nil, rawServer: raw)
        var sent = false
        let result = await join(client) {
            guard !sent, let server = raw.withLock({ $0 }) else { return }
            sent = true
            // Without member keys: PRESENCE decodes the same before the room's HELLO and after.
            if afterHello { server.send(.hello(.init(capabilities: [.rooms, .files, .resume, .acknowledgedText, .relayedFiles, .history], name: "room"))) }
            server.send(frame)
            if thenWelcome { server.send(.welcome(name: "alice")) }
        }
        queue.sync { _ = scheduler.run() }
        client.stop()
        queue.sync { _ = scheduler.run() }
        return (result, queue.sync { raw.withLock { $0?.messages ?? [] } })
    }

    func testBeforeTheCodePassedEveryOtherFrameEndsTheJoinUnanswered() async throws {
        for afterHello in [false, true] {
            for (name, frame) in Self.impostorFrames {
                let (result, answers) = await impostor(sends: frame, code: code, afterHello: afterHello)
                let context = "\(name) \(afterHello ? "after" : "before") the room's HELLO"
                XCTAssertEqual(protocolCode(result), .codeExchange, context)
                XCTAssertEqual(shown, [], context)
                let answered = answers.filter { (message: Message) -> Bool in if case .codeStart = message { false } else if case .error = message { false } else { true } }
                XCTAssertEqual(answered, [], "\(context): the member answered")
            }
        }
    }

    func testWithoutACodeNothingBeforeTheWelcomeIsShownStoredOrAnswered() async throws {
        for (name, frame) in Self.impostorFrames {
            let (result, answers) = await impostor(sends: frame, code: nil, afterHello: true, thenWelcome: true)
            guard case .success = result else { XCTFail("\(name): the join failed"); continue }
            XCTAssertEqual(shown.filter { !$0.hasPrefix("joined") }, [], name)
            let answered = answers.filter { (message: Message) -> Bool in
                switch message {
                case .hello, .session, .goodbye: false
                case .pong: name != "PING" // a PING before the WELCOME is still answered
                default: true
                }
            }
            XCTAssertEqual(answered, [], "\(name): the member answered")
        }
    }

    func testTextAfterTheWelcomeIsStillShown() async throws {
        let raw = Locked<RawPeer?>(nil)
        let client = makeClient(code: nil, server: nil, rawServer: raw)
        var sent = false
        let result = await join(client) {
            guard !sent, let server = raw.withLock({ $0 }) else { return }
            sent = true
            server.send(.hello(.init(name: "room")))
            server.send(.welcome(name: "alice"))
            server.send(.text(from: "room", to: "", text: "welcome in"))
        }
        guard case .success = result else { return XCTFail("the join failed") }
        queue.sync { _ = scheduler.run() }
        XCTAssertTrue(shown.contains { $0.contains("welcome in") })
        client.stop()
    }
}
