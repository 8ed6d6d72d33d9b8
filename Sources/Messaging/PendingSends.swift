import Synchronization

/// One `send` waiting for room in an outbox; its cancellation is seen on the executor
/// whichever comes first, the cancellation or the registration.
final class SendWaiter: Sendable {
    let cancelled = Atomic(false)
}

/// The `send`s that wait, oldest first, for the outboxes they go to (`RoomClient.send`,
/// `RoomServer.send`): each is let through, in order, once its own test says its outbox has
/// room, or failed with an error (cancelled, the session or the room over, its recipient gone).
///
/// - Important: loop-bound: every method runs on its owner's executor; not `Sendable`.
final class PendingSends<Item> {
    private var waiting: [(waiter: SendWaiter, item: Item, continuation: CheckedContinuation<Void, any Error>)] = []

    var isEmpty: Bool { waiting.isEmpty }
    /// The oldest send's item.
    var first: Item? { waiting.first?.item }

    /// Queues a send behind the others. A send whose task was cancelled already is failed at
    /// once with `CancellationError`: returns false then.
    func append(_ waiter: SendWaiter, _ item: Item, _ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        guard !waiter.cancelled.load(ordering: .sequentiallyConsistent) else {
            continuation.resume(throwing: CancellationError())
            return false
        }
        waiting.append((waiter, item, continuation))
        return true
    }

    /// The task of `waiter` was cancelled: its send fails with `CancellationError`. Returns its
    /// item, or nil when it was already let through or failed.
    func cancel(_ waiter: SendWaiter) -> Item? {
        guard let index = waiting.firstIndex(where: { $0.waiter === waiter }) else { return nil }
        let entry = waiting.remove(at: index)
        entry.continuation.resume(throwing: CancellationError())
        return entry.item
    }

    /// Lets the oldest sends through while `hasRoom` says so: `perform` does each, then its
    /// caller returns. Stops at the first that must wait (the later ones wait behind it).
    /// `perform` may end the owner's session or room (an outbox that overflows closes its
    /// stream), which fails the others: each entry leaves the queue before it is performed.
    /// An entry that `hasRoom` or `perform` removed meanwhile (they may re-enter the queue) is
    /// neither performed nor resumed again: only the entry that was checked is removed.
    func admit(while hasRoom: (Item) -> Bool, _ perform: (Item) -> Void) {
        while let first = waiting.first, hasRoom(first.item) {
            guard let index = waiting.firstIndex(where: { $0.waiter === first.waiter }) else { continue }
            waiting.remove(at: index)
            perform(first.item)
            first.continuation.resume()
        }
    }

    /// Fails the sends `matching` says, with the error `error` gives for each; returns their items.
    @discardableResult
    func fail(matching: (Item) -> Bool = { _ in true }, _ error: (Item) -> any Error) -> [Item] {
        var failed: [Item] = []
        waiting.removeAll { entry in
            guard matching(entry.item) else { return false }
            entry.continuation.resume(throwing: error(entry.item))
            failed.append(entry.item)
            return true
        }
        return failed
    }
}
