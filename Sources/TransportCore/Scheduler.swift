import Synchronization

/// Work that was scheduled and may still be called off.
public protocol ScheduledWork: AnyObject {
    /// Calls the work off; does nothing when it already ran.
    func cancel()
}

/// Runs work later, one item at a time, in the order it was handed over: a serial queue.
public protocol Executor: Sendable {
    /// Runs `work` after the work item that is running now (never inside this call).
    ///
    /// - Important: `work` runs on the executor, so it may touch what the executor guards.
    func execute(_ work: @escaping () -> Void)

    /// Whether the caller runs on this executor: what `assertOnExecutor` checks.
    var isCurrentExecutor: Bool { get }
}

extension Executor {
    /// Stops the program (in debug builds; nothing is evaluated in release builds) when called
    /// off this executor: the check that a type bound to it (a connection, a link, a room)
    /// makes on entry to its methods.
    @inlinable
    public func assertOnExecutor(file: StaticString = #fileID, line: UInt = #line) {
        assert(isCurrentExecutor, "called off the executor that owns this object; hand the call over with execute { }",
               file: file, line: line)
    }
}

/// An executor that also keeps time and runs work at a deadline: the clock that heartbeats,
/// handshake deadlines, grace periods and reconnect delays read. Production code uses an
/// `EventLoop` (TransportPOSIX) on the continuous clock; tests and fuzzers use a
/// manual clock they advance (`ManualScheduler` in MessagingTesting), so nothing sleeps.
public protocol Scheduler: Executor {
    /// The current time on this scheduler's clock.
    var now: ContinuousClock.Instant { get }

    /// Runs `work` on the executor once `deadline` has passed.
    /// - Parameters:
    ///   - deadline: the earliest time to run.
    ///   - leeway: how late the work may run, so that timers can fire together.
    /// - Returns: a handle that calls the work off.
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, leeway: Duration, _ work: @escaping () -> Void) -> any ScheduledWork
}

extension Scheduler {
    /// Runs `work` once `delay` has passed, with no particular leeway.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        schedule(at: now + delay, leeway: .zero, work)
    }
}

extension Scheduler {
    /// Suspends the calling task until `delay` has passed on this scheduler's clock, or until
    /// the scheduler drops the timer unrun (an event loop that stops): the task is resumed
    /// exactly once either way.
    public func sleep(for delay: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let sleeper = ResumeOnce(continuation, ifDropped: ())
            execute { schedule(after: delay) { sleeper.resume(()) } }
        }
    }
}

/// A waiting task's continuation, resumed the first time only: by whoever calls `resume`
/// first or, when every holder lets it go unresumed (an executor that drops the work holding
/// it, as an event loop that stops does), with `ifDropped`.
public final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    private let ifDropped: Value

    public init(_ continuation: CheckedContinuation<Value, Never>, ifDropped: Value) {
        self.continuation = Mutex(continuation)
        self.ifDropped = ifDropped
    }

    /// Resumes the task with `value`, unless it was resumed already.
    public func resume(_ value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }

    deinit { resume(ifDropped) }
}

extension Executor {
    /// Runs `body` on the executor and hands its result to the awaiting task: how a task reads
    /// or changes state that lives on an executor (an event loop) without blocking a thread.
    public func submit<Result: Sendable>(_ body: @escaping () -> Result) async -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            execute { continuation.resume(returning: body()) }
        }
    }

    /// Like `submit(_:)`, on an executor that may stop and drop the work unrun (an event loop
    /// shutting down): the task then gets `ifDropped`, instead of waiting for ever.
    public func submit<Result: Sendable>(ifDropped: Result, _ body: @escaping () -> Result) async -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            let waiter = ResumeOnce(continuation, ifDropped: ifDropped)
            execute { waiter.resume(body()) }
        }
    }
}
