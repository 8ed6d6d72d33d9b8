import MessagingCore
import XCTest

final class ReportLimiterTests: XCTestCase {
    func testABurstIsReportedAndTheRestCountedUntilThePeriodEnds() {
        var limiter = ReportLimiter(burst: 3, period: .seconds(10))
        let start = ContinuousClock.now
        XCTAssertEqual((0..<5).map { limiter.admit(at: start + .seconds($0)) }, [true, true, true, false, false])
        XCTAssertEqual(limiter.summaryDue, start + .seconds(10))
        XCTAssertEqual(limiter.takeSuppressed(), 2)
        XCTAssertEqual(limiter.takeSuppressed(), 0)
        XCTAssertNil(limiter.summaryDue)
        XCTAssertTrue(limiter.admit(at: start + .seconds(10)), "a new period reports again")
        XCTAssertTrue(limiter.admit(at: start + .seconds(11)))
    }

    func testAMillionOccurrencesPrintAtMostTheBurst() {
        var limiter = ReportLimiter(burst: 20, period: .seconds(10))
        let start = ContinuousClock.now
        let printed = (0..<1_000_000).filter { limiter.admit(at: start + .microseconds($0)) }.count
        XCTAssertEqual(printed, 20)
        XCTAssertEqual(limiter.takeSuppressed(), 999_980)
    }
}
