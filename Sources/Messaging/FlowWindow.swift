import Synchronization

/// How much a producer may have on its way at once: it takes room before handing work over
/// and the consumer gives the room back when the work is done, so a producer faster than the
/// network waits instead of filling memory. Any number of tasks may wait in `acquire`,
/// served in order.
final class FlowWindow: Sendable {
    private struct State {
        var used = 0
        var closed = false
        /// Tasks waiting for room, oldest first.
        var tasks: [(waiter: FlowWaiter, amount: Int, continuation: CheckedContinuation<Void, any Error>)] = []

        func fits(_ amount: Int, limit: Int) -> Bool { closed || used == 0 || used + amount <= limit }
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Whether a task waits in `acquire` now.
    var hasWaiters: Bool { state.withLock { !$0.tasks.isEmpty } }

    /// Suspends until `amount` fits, after the tasks that waited before, then takes it.
    /// - Parameter whenWaiting: called (on the caller's thread, outside the lock) when the
    ///   task has to wait, not when the room is taken at once.
    /// - Throws: `CancellationError` when the task is cancelled while waiting; nothing is
    ///   taken then.
    func acquire(_ amount: Int, whenWaiting: () -> Void = {}) async throws {
        let waiter = FlowWaiter()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    // Checked under the lock: a cancellation handler that ran before found
                    // nothing to remove, and the flag is already set.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.tasks.isEmpty, state.fits(amount, limit: limit) {
                        state.used += amount
                        return .success(())
                    }
                    state.tasks.append((waiter, amount, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) } else { whenWaiting() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.tasks.firstIndex(where: { $0.waiter === waiter }) else { return nil }
                return state.tasks.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Takes `amount` without waiting (it may pass the limit).
    func take(_ amount: Int) {
        state.withLock { $0.used += amount }
    }

    /// Gives `amount` back, and wakes who now fits.
    func release(_ amount: Int) {
        let ready = state.withLock { state in
            state.used = max(0, state.used - amount)
            return admitTasks(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Nothing waits any more, now or later (the session is over).
    func close() {
        let ready = state.withLock { state in
            state.closed = true
            return admitTasks(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Takes room for the waiting tasks that fit now, in order; returns whom to resume.
    private func admitTasks(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        var ready: [CheckedContinuation<Void, any Error>] = []
        while let first = state.tasks.first, state.fits(first.amount, limit: limit) {
            state.used += first.amount
            ready.append(state.tasks.removeFirst().continuation)
        }
        return ready
    }
}

/// One task waiting in `FlowWindow.acquire`, found again by its cancellation handler.
final class FlowWaiter: Sendable {}
