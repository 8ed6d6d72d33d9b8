import Glibc
import Synchronization
import TransportCore

/// A `Scheduler` whose clock moves only when the test says so, and whose work runs only when
/// the test drives it: `run()` runs what is queued, `advance(by:)` moves the clock and fires
/// the timers that come due, in deadline order. Everything runs on the calling thread, so a
/// room, its links and their transfers behave deterministically (NIO's `EmbeddedEventLoop`).
///
/// - Important: `execute` and `schedule` may be called from any thread (an async task that
///   sleeps, say); `run` and `advance` must be called from one thread at a time, which then
///   acts as the executor. When the code under test lives on a Dispatch queue (`RoomClient`),
///   call them inside `queue.sync`.
public final class ManualScheduler: Scheduler, @unchecked Sendable {
    /// More work items than this in one `run()` means work keeps scheduling more work without
    /// end (a livelock): a bug in the code under test, reported as a crash.
    public static let maximumJobsPerRun = 1_000_000

    private struct Timer {
        let deadline: ContinuousClock.Instant
        let order: Int
        let handle: Handle
        let work: () -> Void
    }

    private final class Handle: ScheduledWork, @unchecked Sendable {
        let cancelled = Atomic(false)
        func cancel() { cancelled.store(true, ordering: .relaxed) }
    }

    // All guarded by `lock`.
    private let lock = Mutex(())
    private var current: ContinuousClock.Instant
    private var jobs: [() -> Void] = []
    private var timers: [Timer] = []
    private var scheduledCount = 0
    /// The thread inside `run` or `advance` (0: none): while one drives the clock, it is the
    /// executor, and code bound to it that runs on another thread is a bug.
    private let driver = Atomic<UInt>(0)

    /// A clock that starts at the real current instant and then stands still.
    public init() { current = .now }

    public var now: ContinuousClock.Instant { lock.withLock { _ in current } }

    public func execute(_ work: @escaping () -> Void) {
        lock.withLock { _ in jobs.append(work) }
    }

    /// True unless another thread is driving the clock (inside `run` or `advance`): a test
    /// that calls the code under test directly acts as its executor.
    public var isCurrentExecutor: Bool {
        let thread = driver.load(ordering: .acquiring)
        return thread == 0 || thread == pthread_self()
    }

    /// Runs `body` as the thread that drives the clock (nested calls on it are fine).
    private func driving<Result>(_ body: () -> Result) -> Result {
        let me = pthread_self()
        let (took, held) = driver.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        precondition(took || held == me, "ManualScheduler driven from two threads at once; run and advance must be called from one thread at a time")
        defer { if took { driver.store(0, ordering: .releasing) } }
        return body()
    }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, leeway: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        let handle = Handle()
        lock.withLock { _ in
            scheduledCount += 1
            timers.append(Timer(deadline: deadline, order: scheduledCount, handle: handle, work: work))
        }
        return handle
    }

    /// Timers set and not yet fired or cancelled.
    public var pendingTimerCount: Int {
        lock.withLock { _ in timers.count { !$0.handle.cancelled.load(ordering: .relaxed) } }
    }

    /// Work items queued and not yet run.
    public var pendingJobCount: Int { lock.withLock { _ in jobs.count } }

    /// Runs queued work, and the work it queues, until none is left; fires timers already
    /// due. Returns how many items ran.
    @discardableResult
    public func run() -> Int { run(atMost: ManualScheduler.maximumJobsPerRun + 1) }

    /// Like `run()`, but stops after `limit` items: a test can act in the middle of a
    /// transfer. Returns how many items ran.
    @discardableResult
    public func run(atMost limit: Int) -> Int {
        driving { runJobs(atMost: limit) }
    }

    private func runJobs(atMost limit: Int) -> Int {
        var count = 0
        while count < limit {
            let next: (() -> Void)? = lock.withLock { _ in
                if !jobs.isEmpty { return jobs.removeFirst() }
                return takeTimer(dueBy: current)?.work
            }
            guard let next else { break }
            count += 1
            precondition(count <= ManualScheduler.maximumJobsPerRun, "more than \(ManualScheduler.maximumJobsPerRun) work items in one run: a livelock")
            next()
        }
        return count
    }

    /// Moves the clock forward by `duration`, firing each timer at its own deadline (with the
    /// clock set to it) and running the work that follows from it.
    public func advance(by duration: Duration) {
        driving {
            let target = now + max(duration, .zero)
            run()
            while let timer = lock.withLock({ _ in takeTimer(dueBy: target) }) {
                lock.withLock { _ in current = max(current, timer.deadline) }
                timer.work()
                run()
            }
            lock.withLock { _ in current = target }
            run()
        }
    }

    /// Removes and returns the earliest timer due by `instant` (caller holds the lock).
    private func takeTimer(dueBy instant: ContinuousClock.Instant) -> Timer? {
        timers.removeAll { $0.handle.cancelled.load(ordering: .relaxed) }
        guard let index = timers.indices.filter({ timers[$0].deadline <= instant })
            .min(by: { (timers[$0].deadline, timers[$0].order) < (timers[$1].deadline, timers[$1].order) }) else { return nil }
        let timer = timers.remove(at: index)
        timer.handle.cancel() // fired: cancelling it now does nothing
        return timer
    }
}
