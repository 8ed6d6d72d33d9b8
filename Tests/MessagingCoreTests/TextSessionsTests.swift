import MessagingCore
import XCTest

final class TextSessionsTests: XCTestCase {
    func testTextSentAgainAfterAReconnectIsARepeat() {
        var sessions = TextSessions()
        sessions.open(7, next: 0)
        XCTAssertTrue(sessions.accept(0, in: 7))
        XCTAssertTrue(sessions.accept(1, in: 7))
        // The connection broke before the ACK for 1 arrived: the client opens again at 1.
        sessions.open(7, next: 1)
        XCTAssertFalse(sessions.accept(1, in: 7), "already relayed")
        XCTAssertTrue(sessions.accept(2, in: 7))
        XCTAssertFalse(sessions.accept(2, in: 7))
    }

    func testSessionsAreIndependentAndANewServerTrustsTheClient() {
        var sessions = TextSessions()
        sessions.open(1, next: 5) // e.g. a restarted server: it starts where the client says
        XCTAssertFalse(sessions.accept(4, in: 1))
        XCTAssertTrue(sessions.accept(5, in: 1))
        XCTAssertTrue(sessions.accept(0, in: 2))
    }

    func testTheOldestSessionIsForgottenBeyondCapacity() {
        var sessions = TextSessions(capacity: 2)
        sessions.open(1, next: 3)
        sessions.open(2, next: 3)
        sessions.open(3, next: 3) // forgets session 1
        sessions.open(1, next: 0)
        XCTAssertTrue(sessions.accept(0, in: 1))
        XCTAssertFalse(sessions.accept(2, in: 3))
    }
}
