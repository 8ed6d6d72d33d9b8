import TransportCore
import XCTest

final class ExponentialBackoffTests: XCTestCase {
    func testDoublesUpToTheMaximumAndResets() {
        var backoff = ExponentialBackoff(initial: .seconds(1), maximum: .seconds(8), jitter: 0.2)
        let delays = (0..<6).map { _ in backoff.nextDelay(random: { 0 }) }
        XCTAssertEqual(delays, [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        backoff.reset()
        XCTAssertEqual(backoff.nextDelay(random: { 0 }), .seconds(1))
    }

    func testJitterShortensByAtMostItsShare() {
        var backoff = ExponentialBackoff(initial: .seconds(10), maximum: .seconds(10), jitter: 0.5)
        XCTAssertEqual(backoff.nextDelay(random: { 0.5 }), .milliseconds(7500))
        XCTAssertEqual(backoff.nextDelay(random: { 0.999 }).components.seconds, 5)
    }
}

final class DurationUnitsTests: XCTestCase {
    func testNanosecondsAndText() {
        XCTAssertEqual(Duration.milliseconds(1500).nanoseconds, 1_500_000_000)
        XCTAssertEqual(Duration.milliseconds(250).secondsText, "250 ms")
        XCTAssertEqual(Duration.seconds(2).secondsText, "2 s")
        XCTAssertEqual(Duration.milliseconds(2500).secondsText, "2.5 s")
    }
}
