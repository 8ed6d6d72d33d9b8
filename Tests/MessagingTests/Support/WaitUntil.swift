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
