import Dispatch
import TransportCore

/// The production `Scheduler`: work runs on a serial Dispatch queue, deadlines on the
/// continuous clock through Dispatch timers.
public struct DispatchScheduler: Scheduler {
    /// The queue all work runs on.
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) { self.queue = queue }

    public var now: ContinuousClock.Instant { .now }

    public func execute(_ work: @escaping () -> Void) {
        let work = QueueBound(work)
        queue.async { work.value() }
    }

    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, leeway: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let handle = DispatchTimerWork(timer)
        let work = QueueBound(work)
        // The handler keeps the handle (and so the timer) alive until it fires or is cancelled.
        timer.setEventHandler {
            handle.cancel()
            work.value()
        }
        let delay = max(.zero, deadline - .now)
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)),
                       leeway: .nanoseconds(Int(leeway.nanoseconds)))
        timer.resume()
        return handle
    }
}

/// A one-shot Dispatch timer; cancelling it (or its firing) releases it.
private final class DispatchTimerWork: ScheduledWork, @unchecked Sendable {
    // Touched on the scheduler's queue only.
    private var timer: (any DispatchSourceTimer)?
    init(_ timer: any DispatchSourceTimer) { self.timer = timer }
    func cancel() {
        timer?.cancel()
        timer = nil
    }
}

/// A closure that is only ever called on the queue it was handed to.
private struct QueueBound: @unchecked Sendable {
    let value: () -> Void
    init(_ value: @escaping () -> Void) { self.value = value }
}

extension DispatchQueue: Executor {
    /// Runs `work` asynchronously on this queue.
    public func execute(_ work: @escaping () -> Void) {
        let work = QueueBound(work)
        async { work.value() }
    }
}
