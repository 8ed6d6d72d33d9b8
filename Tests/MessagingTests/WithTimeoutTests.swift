import MessagingTesting
import XCTest

/// `withTimeout`: the body's value or error passes through; a body that never finishes (a
/// continuation nobody resumes, which ignores cancellation) fails with `TimeLimitExceeded`
/// instead of hanging the run.
final class WithTimeoutTests: XCTestCase {
    struct Failure: Error {}

    func testTheBodysValueAndErrorPassThrough() async throws {
        let value = try await withTimeout(seconds: 5, "a quick body") { 42 }
        XCTAssertEqual(value, 42)
        do {
            _ = try await withTimeout(seconds: 5, "a failing body") { () async throws -> Int in throw Failure() }
            XCTFail("the body's error was lost")
        } catch is Failure {}
    }

    func testABodyThatNeverFinishesFailsWithTimeLimitExceeded() async throws {
        let started = ContinuousClock.now
        do {
            // A continuation nobody resumes: cancellation cannot end it.
            _ = try await withTimeout(seconds: 0.2, "a body that never finishes") {
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
            XCTFail("a body that never finished returned")
        } catch let error as TimeLimitExceeded {
            XCTAssertEqual(error.what, "a body that never finishes")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }
}
