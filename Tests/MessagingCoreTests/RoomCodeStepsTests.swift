import MessagingCore
import XCTest

/// The room-code exchange's frames and both sides' state machines: exact lengths, and every
/// frame out of order answered with `code-exchange` (never a trap).
final class RoomCodeStepsTests: XCTestCase {
    let share = [UInt8](repeating: 1, count: 32)
    let tag = [UInt8](repeating: 2, count: 64)
    let hello = Message.Hello(name: "alice")

    func decode(_ type: UInt16, _ payload: [UInt8]) throws(ProtocolError) -> Message {
        try Message(decoding: Frame(type: type, payload: payload))
    }

    func testFramesRoundTripWithTheirExactLayouts() throws {
        let start = Message.codeStart(share: share, associatedData: Array("ad".utf8))
        XCTAssertEqual(start.frame.type, 0x07)
        XCTAssertEqual(start.frame.payload, share + Array("ad".utf8))
        XCTAssertEqual(try Message(decoding: start.frame), start)
        let reply = Message.codeReply(share: share, tag: tag, associatedData: [])
        XCTAssertEqual(reply.frame.type, 0x08)
        XCTAssertEqual(reply.frame.payload, share + tag)
        XCTAssertEqual(try Message(decoding: reply.frame), reply)
        let confirm = Message.codeConfirm(tag: tag)
        XCTAssertEqual(confirm.frame.type, 0x09)
        XCTAssertEqual(try Message(decoding: confirm.frame), confirm)
    }

    func testWrongLengthsAreACodeExchangeErrorThatEndsTheConnection() {
        let cases: [(UInt16, Int)] = [(0x07, 0), (0x07, 31), (0x07, 32 + 1025), (0x08, 95), (0x08, 96 + 1025),
                                      (0x09, 63), (0x09, 65), (0x09, 0)]
        for (type, length) in cases {
            XCTAssertThrowsError(try decode(type, [UInt8](repeating: 9, count: length)), "type \(type), \(length) bytes") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .codeExchange)
                XCTAssertTrue(ProtocolError.Code.codeExchange.closesConnection)
            }
        }
        XCTAssertNoThrow(try decode(0x07, [UInt8](repeating: 9, count: 32 + 1024)))
        XCTAssertNoThrow(try decode(0x08, [UInt8](repeating: 9, count: 96 + 1024)))
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x09, flags: 1, payload: tag)))
    }

    func testTheNewErrorCodesHaveTheirNames() {
        XCTAssertEqual(ProtocolError.Code.codeRequired.name, "code-required")
        XCTAssertEqual(ProtocolError.Code.wrongRoomCode.name, "wrong-room-code")
        XCTAssertEqual(ProtocolError.Code.tooManyAttempts.name, "too-many-attempts")
        XCTAssertEqual(ProtocolError.Code.notAdmitted.name, "not-admitted")
        XCTAssertEqual(ProtocolError.Code.codeExchange.name, "code-exchange")
    }

    // MARK: The publisher (responder)

    func isRefusal(_ step: RoomCodeResponderSteps.Step) -> Bool {
        if case .refuse(let error) = step { error.code == .codeExchange } else { false }
    }

    func testTheResponderRunsTheExchangeInOrderThenTakesHello() {
        var steps = RoomCodeResponderSteps(unavailable: nil)
        XCTAssertEqual(steps.receive(.codeStart(share: share, associatedData: [])), .answer(share: share, associatedData: []))
        XCTAssertEqual(steps.state, .awaitingConfirmation)
        XCTAssertEqual(steps.receive(.codeConfirm(tag: tag)), .check(tag: tag))
        steps.checked(true)
        XCTAssertEqual(steps.receive(.hello(hello)), .hello(hello, passedCode: true))
        steps.joined()
        XCTAssertTrue(isRefusal(steps.receive(.codeStart(share: share, associatedData: []))), "after HELLO")
    }

    func testAHelloWithoutTheExchangeHasNotPassed() {
        var steps = RoomCodeResponderSteps(unavailable: nil)
        XCTAssertEqual(steps.receive(.hello(hello)), .hello(hello, passedCode: false))
        XCTAssertEqual(steps.receive(.goodbye(reason: "")), .other(.goodbye(reason: "")))
    }

    func testEveryOutOfOrderFrameIsRefusedByTheResponder() {
        let start = Message.codeStart(share: share, associatedData: [])
        let confirm = Message.codeConfirm(tag: tag)
        let reply = Message.codeReply(share: share, tag: tag, associatedData: [])
        func after(_ messages: [Message], passing: Bool = true) -> RoomCodeResponderSteps {
            var steps = RoomCodeResponderSteps(unavailable: nil)
            for message in messages {
                _ = steps.receive(message)
                if steps.state == .checking { steps.checked(passing) }
            }
            return steps
        }
        let refusals: [(String, [Message], Message)] = [
            ("CONFIRM first", [], confirm),
            ("REPLY first", [], reply),
            ("START twice", [start], start),
            ("REPLY during", [start], reply),
            ("HELLO before CONFIRM", [start], .hello(hello)),
            ("TEXT during", [start], .text(from: "", to: "", text: "hi")),
            ("START after passing", [start, confirm], start),
            ("CONFIRM twice", [start, confirm], confirm),
        ]
        for (what, before, message) in refusals {
            var steps = after(before)
            XCTAssertTrue(isRefusal(steps.receive(message)), what)
            XCTAssertEqual(steps.state, .failed, what)
            XCTAssertEqual(steps.receive(.hello(hello)), .ignore, "\(what): nothing counts after a refusal")
        }
        var failed = after([start, confirm], passing: false)
        XCTAssertEqual(failed.state, .failed)
        XCTAssertEqual(failed.receive(.hello(hello)), .ignore, "a wrong tag ends it")
    }

    func testARoomWithoutACodeRefusesTheExchange() {
        var steps = RoomCodeResponderSteps(unavailable: "no code here")
        XCTAssertEqual(steps.receive(.codeStart(share: share, associatedData: [])), .refuse(ProtocolError(.codeExchange, "no code here")))
    }

    func testTheMembersOwnFailureIsAFailedAttempt() {
        var steps = RoomCodeResponderSteps(unavailable: nil)
        _ = steps.receive(.codeStart(share: share, associatedData: []))
        XCTAssertEqual(steps.receive(.error(code: ProtocolError.Code.wrongRoomCode.rawValue, message: "")), .peerFailed)
        XCTAssertEqual(steps.state, .failed)
    }

    // MARK: The member (initiator)

    func testTheInitiatorStartsOnTheServersHelloAndFinishesOnTheReply() {
        var steps = RoomCodeInitiatorSteps(usesCode: true)
        XCTAssertEqual(steps.receive(.hello(hello)), .start(hello))
        XCTAssertEqual(steps.receive(.codeReply(share: share, tag: tag, associatedData: [])), .finish(share: share, tag: tag, associatedData: []))
        steps.checked(true)
        XCTAssertEqual(steps.state, .passed)
        XCTAssertEqual(steps.receive(.welcome(name: "alice")), .other(.welcome(name: "alice")))
    }

    func testEveryOutOfOrderFrameIsRefusedByTheInitiator() {
        let reply = Message.codeReply(share: share, tag: tag, associatedData: [])
        let refusals: [(String, Bool, [Message], Message)] = [
            ("REPLY before HELLO", true, [], reply),
            ("REPLY without a code", false, [.hello(hello)], reply),
            ("START from the server", true, [.hello(hello)], .codeStart(share: share, associatedData: [])),
            ("CONFIRM from the server", true, [.hello(hello)], .codeConfirm(tag: tag)),
            ("WELCOME before the exchange", true, [], .welcome(name: "alice")),
            ("WELCOME during the exchange", true, [.hello(hello)], .welcome(name: "alice")),
        ]
        for (what, usesCode, before, message) in refusals {
            var steps = RoomCodeInitiatorSteps(usesCode: usesCode)
            for earlier in before { _ = steps.receive(earlier) }
            guard case .refuse(let error) = steps.receive(message) else { XCTFail(what); continue }
            XCTAssertEqual(error.code, .codeExchange, what)
            XCTAssertEqual(steps.state, .failed, what)
        }
        var twice = RoomCodeInitiatorSteps(usesCode: true)
        _ = twice.receive(.hello(hello))
        _ = twice.receive(reply)
        twice.checked(true)
        guard case .refuse = twice.receive(reply) else { return XCTFail("a second REPLY") }
    }

    func testAnErrorBeforeTheProofIsARefusalByARoomNotProvedNeverAWrongCode() {
        let wrongCode = Message.error(code: ProtocolError.Code.wrongRoomCode.rawValue, message: "nope")
        for before in [[], [Message.hello(hello)]] {
            var steps = RoomCodeInitiatorSteps(usesCode: true)
            for earlier in before { _ = steps.receive(earlier) }
            XCTAssertEqual(steps.receive(wrongCode),
                           .refusedBeforeProof(ProtocolError(.codeExchange, "the room, which has not proved the room code, refused: wrong-room-code: nope")))
            XCTAssertEqual(steps.state, .failed)
            XCTAssertEqual(steps.receive(.codeReply(share: share, tag: tag, associatedData: [])), .ignore, "nothing counts after it")
        }
        var limited = RoomCodeInitiatorSteps(usesCode: true)
        _ = limited.receive(.hello(hello))
        XCTAssertEqual(limited.receive(.error(code: ProtocolError.Code.tooManyAttempts.rawValue, message: "try again in 60 s")),
                       .refusedBeforeProof(ProtocolError(.tooManyAttempts, "the room, which has not proved the room code, refused: try again in 60 s")),
                       "the guessing limit keeps its code, so that the member tries later")
        var proved = RoomCodeInitiatorSteps(usesCode: true)
        _ = proved.receive(.hello(hello))
        _ = proved.receive(.codeReply(share: share, tag: tag, associatedData: []))
        proved.checked(true)
        XCTAssertEqual(proved.receive(wrongCode), .other(wrongCode), "a room that proved the code is believed")
        var plain = RoomCodeInitiatorSteps(usesCode: false)
        XCTAssertEqual(plain.receive(wrongCode), .other(wrongCode), "without a code, an ERROR is ordinary")
    }

    func testWithoutACodeEverythingButTheExchangeIsOrdinary() {
        var steps = RoomCodeInitiatorSteps(usesCode: false)
        XCTAssertEqual(steps.receive(.hello(hello)), .other(.hello(hello)))
        XCTAssertEqual(steps.receive(.welcome(name: "a")), .other(.welcome(name: "a")))
    }
}
