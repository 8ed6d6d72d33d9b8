/// Lets at most `limit` pieces of work run at once; the rest wait first come, first served,
/// and at most `maximumWaiting` wait (one more is turned away). A waiter whose task is
/// cancelled leaves the queue; `close` turns every waiter away at once.
public actor ConcurrencyLimit {
    /// Why work did not get a slot.
    public enum Refusal: Error, Sendable, Hashable {
        /// `maximumWaiting` pieces of work wait already.
        case queueFull
        /// The task was cancelled while it waited, or the limit was closed.
        case cancelled
    }

    /// The most pieces of work that run at once.
    public nonisolated let limit: Int
    /// The most pieces of work that wait for a slot.
    public nonisolated let maximumWaiting: Int
    private var running = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID: UInt64 = 0
    private var isClosed = false

    public init(limit: Int, maximumWaiting: Int) {
        self.limit = max(1, limit)
        self.maximumWaiting = max(0, maximumWaiting)
    }

    /// How many run now, and how many wait.
    public var load: (running: Int, waiting: Int) { (running, waiters.count) }

    /// Runs `body` once a slot is free.
    /// - Throws: `Refusal` when the queue is full or the task was cancelled while it waited;
    ///   else what `body` throws.
    public nonisolated func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    /// Turns away every piece of work that waits, and all that comes later (`Refusal.cancelled`);
    /// what runs goes on. For a program that stops: its waiters need not wait their turn to learn it.
    public func close() {
        isClosed = true
        let turnedAway = waiters
        waiters = []
        for waiter in turnedAway { waiter.continuation.resume(throwing: Refusal.cancelled) }
    }

    private func acquire() async throws {
        guard !isClosed else { throw Refusal.cancelled }
        if running < limit && waiters.isEmpty {
            running += 1
            return
        }
        guard waiters.count < maximumWaiting else { throw Refusal.queueFull }
        guard !Task.isCancelled else { throw Refusal.cancelled }
        nextID &+= 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Hands the slot to the oldest waiter, or frees it.
    private func release() {
        if waiters.isEmpty {
            running -= 1
        } else {
            waiters.removeFirst().continuation.resume()
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: Refusal.cancelled)
    }
}
