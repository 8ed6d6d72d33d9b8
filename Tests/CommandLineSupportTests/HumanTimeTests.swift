import CommandLineSupport
import Glibc
import XCTest

final class HumanTimeTests: XCTestCase {
    func testFormatIsDateSpaceTimeToTheSecondZeroPadded() {
        var parts = tm()
        parts.tm_year = 2026 - 1900
        parts.tm_mon = 0
        parts.tm_mday = 2
        parts.tm_hour = 3
        parts.tm_min = 4
        parts.tm_sec = 5
        XCTAssertEqual(HumanTime.format(parts), "2026-01-02 03:04:05")
        parts.tm_mon = 11
        parts.tm_mday = 31
        parts.tm_hour = 23
        parts.tm_min = 59
        parts.tm_sec = 59
        XCTAssertEqual(HumanTime.format(parts), "2026-12-31 23:59:59")
    }

    func testMillisecondsAreShownInLocalTime() {
        setenv("TZ", "UTC", 1)
        tzset()
        defer { unsetenv("TZ"); tzset() }
        XCTAssertEqual(HumanTime.format(unixMilliseconds: 1_764_607_205_999), "2025-12-01 16:40:05")
        setenv("TZ", "Asia/Kolkata", 1)
        tzset()
        XCTAssertEqual(HumanTime.format(unixMilliseconds: 1_764_607_205_999), "2025-12-01 22:10:05")
    }

    func testTheJSONTimeOfAGivenMoment() {
        XCTAssertEqual(timestamp(unixMilliseconds: 1_764_607_205_123), "2025-12-01T16:40:05.123Z")
    }

    func testTimestampsOptionsAreExclusive() throws {
        let spec = CommandSpec(name: "t", version: "1", overview: "t", options: [.timestamps, .noTimestamps])
        func parse(_ arguments: [String]) throws -> Bool? {
            guard case .run(let parsed) = try ParsedCommandLine.parse(arguments, spec: spec) else { XCTFail(); return nil }
            return try parsed.timestamps()
        }
        XCTAssertEqual(try parse([]), nil)
        XCTAssertEqual(try parse(["--timestamps"]), true)
        XCTAssertEqual(try parse(["--no-timestamps"]), false)
        XCTAssertThrowsError(try parse(["--timestamps", "--no-timestamps"]))
    }
}
