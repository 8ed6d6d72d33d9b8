import MessagingCore
import XCTest

final class TextSessionsTests: XCTestCase {
    func testTextSentAgainAfterAReconnectIsARepeat() throws {
        var sessions = TextSessions()
        try sessions.attach(7, next: 0, holder: 1, address: "a")
        XCTAssertTrue(sessions.accept(0, in: 7))
        XCTAssertTrue(sessions.accept(1, in: 7))
        // The connection broke before the ACK for 1 arrived: the client opens again at 1.
        sessions.detach(7, holder: 1)
        try sessions.attach(7, next: 1, holder: 2, address: "a")
        XCTAssertFalse(sessions.accept(1, in: 7), "already relayed")
        XCTAssertTrue(sessions.accept(2, in: 7))
        XCTAssertFalse(sessions.accept(2, in: 7))
    }

    func testSessionsAreIndependentAndANewServerTrustsTheClient() throws {
        var sessions = TextSessions()
        try sessions.attach(1, next: 5, holder: 1, address: "a") // e.g. a restarted server: it starts where the client says
        try sessions.attach(2, next: 0, holder: 2, address: "a")
        XCTAssertFalse(sessions.accept(4, in: 1))
        XCTAssertTrue(sessions.accept(5, in: 1))
        XCTAssertTrue(sessions.accept(0, in: 2))
        XCTAssertFalse(sessions.accept(0, in: 3), "a session nobody opened accepts nothing")
    }

    func testASessionInUseCannotBeTakenOver() throws {
        var sessions = TextSessions()
        try sessions.attach(9, next: 0, holder: 1, address: "a")
        XCTAssertThrowsError(try sessions.attach(9, next: 100, holder: 2, address: "b")) { error in
            XCTAssertEqual(error as? TextSessions.Refusal, .inUse)
        }
        XCTAssertTrue(sessions.accept(0, in: 9), "the holder's numbering is unchanged")
    }

    func testNumbersAtTheLimitAreRefusedAndNothingOverflows() throws {
        var sessions = TextSessions()
        XCTAssertThrowsError(try sessions.attach(1, next: .max, holder: 1, address: "a")) { error in
            XCTAssertEqual(error as? TextSessions.Refusal, .outOfRange)
        }
        XCTAssertThrowsError(try sessions.attach(1, next: TextSessions.sequenceLimit, holder: 1, address: "a"))
        try sessions.attach(1, next: TextSessions.sequenceLimit - 1, holder: 1, address: "a")
        XCTAssertTrue(sessions.accept(TextSessions.sequenceLimit - 1, in: 1))
        XCTAssertFalse(sessions.accept(TextSessions.sequenceLimit - 1, in: 1))
        XCTAssertFalse(sessions.accept(.max, in: 1), "numbers past the limit are never taken")
    }

    func testTheOldestIdleSessionIsForgottenBeyondCapacityAndHeldOnesNever() throws {
        var sessions = TextSessions(capacity: 2)
        for id in UInt64(1)...3 { try sessions.attach(id, next: 3, holder: Int(id), address: "a") }
        try sessions.attach(4, next: 3, holder: 4, address: "a")
        XCTAssertEqual(sessions.count, 4, "held sessions are not forgotten")
        for id in UInt64(1)...3 { sessions.detach(id, holder: Int(id)) } // three idle: session 1 goes
        XCTAssertEqual(sessions.count, 3)
        try sessions.attach(1, next: 0, holder: 5, address: "a")
        XCTAssertTrue(sessions.accept(0, in: 1), "forgotten: starts again where the client says")
        try sessions.attach(3, next: 0, holder: 6, address: "a")
        XCTAssertFalse(sessions.accept(2, in: 3), "remembered")
    }

    func testOneHostOpeningManySessionsForgetsItsOwnFirst() throws {
        var sessions = TextSessions(capacity: 64)
        try sessions.attach(1 << 40, next: 0, holder: 1, address: "victim")
        XCTAssertTrue(sessions.accept(0, in: 1 << 40))
        sessions.detach(1 << 40, holder: 1) // the victim's cable is out; it will come back
        for id in UInt64(1)...10_000 {
            try sessions.attach(id, next: 0, holder: Int(id) + 1, address: "attacker")
            sessions.detach(id, holder: Int(id) + 1)
        }
        XCTAssertEqual(sessions.count, 64)
        try sessions.attach(1 << 40, next: 0, holder: 2, address: "victim")
        XCTAssertFalse(sessions.accept(0, in: 1 << 40), "the victim's session survived the flood")
    }
}
