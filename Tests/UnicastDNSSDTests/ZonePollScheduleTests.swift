import UnicastDNSSD
import XCTest

/// `ZonePollSchedule`: a token bucket over full reads of a zone. A calm zone is read at the
/// next poll after a change; whatever the serial does, a zone is read at most 3 times in a
/// burst and then once every 30 s.
final class ZonePollScheduleTests: XCTestCase {
    /// Polls for `span` of simulated time as the schedule says, reading when `wantsRead(poll)`
    /// and the schedule allows it: the number of reads.
    func reads(in span: Duration, wantsRead: (Int) -> Bool) -> Int {
        var schedule = ZonePollSchedule()
        let start = ContinuousClock.now
        var now = start
        var (reads, poll) = (0, 0)
        while now - start < span {
            if wantsRead(poll) && schedule.mayRead(at: now) {
                schedule.noteRead(at: now)
                reads += 1
            }
            poll += 1
            now += schedule.nextWait(at: now)
        }
        return reads
    }

    /// A serial that changes at every poll: 3 reads (at 0, 2 and 4 s), then one every 30 s
    /// (at 30, 60 … 570 s): 22 in 10 minutes instead of 300.
    func testARotatingSerialIsReadAtMostEvery30Seconds() {
        XCTAssertEqual(reads(in: .seconds(600)) { _ in true }, 3 + 19)
    }

    /// Review attacks16z finding 1: a serial that changes at 2 polls of 3 (or 1 of 2, or that
    /// stays put while new names wait at every read) gets no more reads than one that always
    /// changes. (The old schedule, which counted changes in a row, read it 100 times in 300 s.)
    func testAChangeThatSkipsSomePollsIsBoundAllTheSame() {
        for pattern in [2, 3, 4, 5] {
            let count = reads(in: .seconds(300)) { $0 % pattern != pattern - 1 }
            XCTAssertLessThanOrEqual(count, 3 + 300 / 30, "changed at \(pattern - 1) polls of \(pattern): \(count) reads in 300 s")
        }
    }

    /// A calm zone that changes now and then is read at the next poll, 2 s later; after a
    /// burst, it gets its reads back one every 30 s.
    func testACalmZoneIsFollowedWithin2SecondsAndTheBucketRefills() {
        var schedule = ZonePollSchedule()
        let start = ContinuousClock.now
        XCTAssertEqual(schedule.nextWait(at: start), .seconds(2))
        for second in [0, 2, 4] {
            XCTAssertTrue(schedule.mayRead(at: start + .seconds(second)))
            schedule.noteRead(at: start + .seconds(second))
        }
        XCTAssertTrue(schedule.exhausted)
        XCTAssertFalse(schedule.mayRead(at: start + .seconds(29)))
        XCTAssertEqual(schedule.nextWait(at: start + .seconds(4)), .seconds(26), "the first read comes back 30 s after the burst began")
        XCTAssertTrue(schedule.mayRead(at: start + .seconds(30)))
        XCTAssertEqual(schedule.nextWait(at: start + .seconds(30)), .seconds(2))
        // Calm for long enough: the whole burst is back, changes are followed every 2 s again.
        let later = start + .seconds(200)
        for second in [0, 2, 4] {
            XCTAssertTrue(schedule.mayRead(at: later + .seconds(second)))
            schedule.noteRead(at: later + .seconds(second))
        }
        XCTAssertFalse(schedule.mayRead(at: later + .seconds(6)))
    }
}
