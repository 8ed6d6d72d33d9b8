import UnicastDNSSD
import XCTest

/// `ZonePollSchedule`: 2 s between polls of a calm zone, 30 s once three polls in a row found
/// it changed, 2 s again from the first poll that finds it unchanged.
final class ZonePollScheduleTests: XCTestCase {
    func testThreeChangingPollsInARowSlowDownAndOneCalmPollRestores() {
        var schedule = ZonePollSchedule()
        XCTAssertEqual(schedule.nextWait, .seconds(2))
        schedule.note(changed: true)
        schedule.note(changed: true)
        XCTAssertEqual(schedule.nextWait, .seconds(2), "a zone that changes now and then is followed every 2 s")
        schedule.note(changed: false)
        schedule.note(changed: true)
        schedule.note(changed: true)
        XCTAssertEqual(schedule.nextWait, .seconds(2), "the changes must be in a row")
        schedule.note(changed: true)
        XCTAssertTrue(schedule.churning)
        XCTAssertEqual(schedule.nextWait, .seconds(30))
        for _ in 0..<1000 { schedule.note(changed: true) }
        XCTAssertEqual(schedule.nextWait, .seconds(30))
        schedule.note(changed: false)
        XCTAssertFalse(schedule.churning)
        XCTAssertEqual(schedule.nextWait, .seconds(2))
    }

    /// A server whose serial changes at every poll gets at most 3 reads in its first 10 s
    /// and then one every 30 s: in 10 minutes, 23 reads instead of 300.
    func testARotatingSerialIsReadAtMostEvery30Seconds() {
        var schedule = ZonePollSchedule()
        var elapsed = Duration.zero
        var reads = 0
        while elapsed < .seconds(600) {
            elapsed += schedule.nextWait
            schedule.note(changed: true)
            reads += 1
        }
        XCTAssertEqual(reads, 3 + 20)
    }
}
