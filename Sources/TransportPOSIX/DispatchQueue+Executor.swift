import Dispatch
import TransportCore

extension DispatchQueue: Executor {
    /// Runs `work` asynchronously on this queue: for work that may block (disk), kept off the
    /// event loop.
    public func execute(_ work: @escaping () -> Void) {
        let work = QueueBound(work)
        async { work.value() }
    }
}

/// A closure that is only ever called on the queue it was handed to.
private struct QueueBound: @unchecked Sendable {
    let value: () -> Void
    init(_ value: @escaping () -> Void) { self.value = value }
}
