import Dispatch
import MessagingTesting
import XCTest

struct TimedOut: Error {}

/// Polls `condition` every 10 ms; fails the test (and throws) when it is still false after
/// `timeout`.
func waitUntil(timeout: Duration = .seconds(60), file: StaticString = #filePath, line: UInt = #line,
               _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            XCTFail("condition not met within \(timeout)", file: file, line: line)
            throw TimedOut()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Runs `scheduler`'s pending work on `queue` until `condition` holds there, trying every
/// 1 ms; fails the test (and throws) after `attempts` tries instead of waiting for ever.
func drive(_ what: String, on queue: DispatchQueue, _ scheduler: ManualScheduler, attempts: Int = 3000,
           until condition: () -> Bool) async throws {
    for _ in 0..<attempts {
        if queue.sync(execute: { scheduler.run(); return condition() }) { return }
        try await Task.sleep(for: .milliseconds(1))
    }
    XCTFail("timed out waiting for \(what)")
    throw TimedOut()
}
