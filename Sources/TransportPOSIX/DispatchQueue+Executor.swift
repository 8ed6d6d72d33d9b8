import Dispatch
import TransportCore

extension DispatchQueue: Executor {
    /// Runs `work` asynchronously on this queue: for work that may block (disk), kept off the
    /// event loop.
    public func execute(_ work: @escaping () -> Void) {
        let work = QueueBound(work)
        async { work.value() }
    }

    /// Stops the program when the caller is not on this queue (`dispatchPrecondition`), so
    /// it is asked only inside `assert`, as `assertOnExecutor` does: debug builds only.
    public var isCurrentExecutor: Bool {
        dispatchPrecondition(condition: .onQueue(self))
        return true
    }
}

/// A closure that is only ever called on the queue it was handed to.
private struct QueueBound: @unchecked Sendable {
    let value: () -> Void
    init(_ value: @escaping () -> Void) { self.value = value }
}
