import Synchronization
import TransportCore
import XCTest

/// `Scheduler.sleep` and `Executor.submit(ifDropped:_:)` resume their task exactly once, also when the scheduler drops the timer
/// without running it, as an event loop does when it stops (review attacks16, finding 7: the
/// continuation leaked, and Swift printed "SWIFT TASK CONTINUATION MISUSE" on SIGTERM).
final class SchedulerSleepTests: XCTestCase {
    /// Runs what it is given at once, and keeps timers until told to drop them all unrun.
    final class DroppingScheduler: Scheduler, @unchecked Sendable {
        final class Work: ScheduledWork { func cancel() {} }
        /// The timers set, unrun (only ever touched under `timers`' lock).
        struct Timers: @unchecked Sendable { var list: [() -> Void] = [] }
        let timers = Mutex(Timers())
        /// Set: `execute` drops its work unrun, as a stopped event loop does.
        let dropsWork = Atomic(false)
        var now: ContinuousClock.Instant { .now }
        var isCurrentExecutor: Bool { true }
        func execute(_ work: @escaping () -> Void) { if !dropsWork.load(ordering: .relaxed) { work() } }
        func schedule(at deadline: ContinuousClock.Instant, leeway: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
            timers.withLock { $0.list.append(work) }
            return Work()
        }
        func fireAll() { for work in timers.withLock({ $0.list }) { work() } }
        func dropAll() { timers.withLock { $0.list.removeAll() } }
    }

    /// Waits up to 2 s for `task` to end (a leaked continuation would never let it).
    func returns(_ task: Task<Void, Never>) async throws {
        let ended = Mutex(false)
        Task { await task.value; ended.withLock { $0 = true } }
        for _ in 0..<2000 where !ended.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        XCTAssertTrue(ended.withLock { $0 }, "the sleep never returned")
    }

    func testASleepWhoseTimerIsDroppedUnrunStillReturns() async throws {
        let scheduler = DroppingScheduler()
        let sleeping = Task { await scheduler.sleep(for: .seconds(3600)) }
        while scheduler.timers.withLock({ $0.list.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        scheduler.dropAll()
        try await returns(sleeping)
    }

    func testASleepWhoseTimerFiresReturnsOnceEvenIfTheTimerIsDroppedAfterwards() async throws {
        let scheduler = DroppingScheduler()
        let sleeping = Task { await scheduler.sleep(for: .seconds(1)) }
        while scheduler.timers.withLock({ $0.list.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        scheduler.fireAll()
        scheduler.fireAll() // a timer that ran twice must not resume twice
        scheduler.dropAll()
        try await returns(sleeping)
    }

    func testASubmitWhoseWorkIsDroppedGetsItsFallback() async {
        let scheduler = DroppingScheduler()
        let ran = await scheduler.submit(ifDropped: 0) { 1 }
        XCTAssertEqual(ran, 1)
        scheduler.dropsWork.store(true, ordering: .relaxed)
        let dropped = await scheduler.submit(ifDropped: 0) { 1 }
        XCTAssertEqual(dropped, 0)
    }
}
