import Messaging
import MessagingTesting
import XCTest

final class LimitedReportsTests: XCTestCase {
    func testABurstIsReportedAndTheRestSummarisedOnceThePeriodEnds() {
        let scheduler = ManualScheduler()
        var summaries: [Int] = []
        let reports = LimitedReports(burst: 3, period: .seconds(10), scheduler: scheduler) { summaries.append($0) }
        XCTAssertEqual((0..<1000).map { _ in reports.admit() }.filter { $0 }.count, 3)
        scheduler.advance(by: .seconds(9))
        XCTAssertEqual(summaries, [], "not before the period ends")
        scheduler.advance(by: .seconds(2))
        XCTAssertEqual(summaries, [997])
        XCTAssertTrue(reports.admit(), "a new period reports again")
        scheduler.advance(by: .seconds(20))
        XCTAssertEqual(summaries, [997], "nothing was suppressed since")
    }
}
