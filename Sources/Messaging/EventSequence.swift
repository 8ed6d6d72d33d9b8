import TransportCore

/// The events of a room type (`RoomClient.events`, `RoomServer.events`) as an async
/// sequence over its `EventBuffer`: each `next()` hands its continuation to the owner's
/// executor, where the buffer resumes it at once with a buffered event or keeps it until the
/// next one comes. Taking events is what lets the owner read again once its buffer was full.
///
/// - Important: one task iterates at a time (a second `next()` takes the first one's place,
///   and the first gets nil). A cancelled `next()` returns nil and takes no event: what was
///   buffered stays for the next call.
public struct EventSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// Where the buffer lives.
    let executor: any Executor
    /// The buffer; called on `executor` only (the buffer is loop-bound, not `Sendable`).
    let buffer: @Sendable () -> EventBuffer<Element>

    public func makeAsyncIterator() -> Iterator { Iterator(executor: executor, buffer: buffer) }

    /// Takes the next event, waiting for it on the owner's executor. It holds no state of its
    /// own: every iterator of one sequence takes from the same buffer.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let executor: any Executor
        let buffer: @Sendable () -> EventBuffer<Element>

        /// The next event, or nil once the sequence ended (and every event was taken) or when
        /// the calling task was cancelled.
        public mutating func next() async -> Element? {
            let (executor, buffer) = (self.executor, self.buffer)
            let waiter = EventWaiter()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                    executor.execute { buffer().next(waiter, continuation) }
                }
            } onCancel: {
                waiter.cancelled.store(true, ordering: .sequentiallyConsistent)
                executor.execute { buffer().cancel(waiter) }
            }
        }
    }
}
