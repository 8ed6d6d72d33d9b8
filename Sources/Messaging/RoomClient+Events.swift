import Synchronization
import TransportCore

extension RoomClient {
    /// The client's events, in the order they happened, as an async sequence: iterate it from
    /// one task while the session runs. It ends once the session's outcome is decided (`run()`
    /// returns it), the connection is gone and every event before that was taken.
    ///
    /// Back-pressure: events wait in a buffer of `Options.eventBufferLimit`. When it is full,
    /// the client stops reading from the server (the frames stay in the kernel and in the
    /// server's outbox) and reads again once the consumer took it down to half. Nothing is
    /// dropped: the few events that come without reading (a line reported as not sent, a
    /// reconnect) are buffered beyond the limit. A consumer that takes nothing for as long as
    /// the heartbeat allows (4 intervals) looks to the client like a silent server: the link
    /// ends and the client reconnects.
    ///
    /// - Important: one task iterates at a time. A cancelled `next()` returns nil and takes no
    ///   event: what was buffered stays for the next call.
    public var events: Events { Events(client: self) }

    /// See `RoomClient.events`.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = Event
        let client: RoomClient

        public func makeAsyncIterator() -> Iterator { Iterator(client: client) }

        /// Takes the next event, waiting for it on the client's executor.
        public struct Iterator: AsyncIteratorProtocol {
            let client: RoomClient

            /// The next event, or nil when the session ended (and every event was taken) or
            /// the calling task was cancelled.
            public mutating func next() async -> Event? {
                let client = self.client
                let waiter = EventWaiter()
                return await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                        client.executor.execute { client.eventBuffer.next(waiter, continuation) }
                    }
                } onCancel: {
                    waiter.cancelled.store(true, ordering: .sequentiallyConsistent)
                    client.executor.execute { client.eventBuffer.cancel(waiter) }
                }
            }
        }
    }
}

/// One call of `next()`: its cancellation is seen on the executor whichever comes first, the
/// cancellation or the registration.
final class EventWaiter: Sendable {
    let cancelled = Atomic(false)
}

/// The events between the client and its consumer (see `RoomClient.events`).
///
/// - Important: loop-bound: every method runs on the client's executor; not `Sendable`.
final class EventBuffer {
    /// From this many buffered events on, `pressure(true)` asks to stop reading.
    let limit: Int
    /// When set (the fuzz target and white-box tests), every event goes here at once, with no
    /// buffer and no back-pressure.
    private let hook: (@Sendable (RoomClient.Event) -> Void)?
    /// Called with true when the buffer reaches `limit`, with false when it is down to half.
    var pressure: (Bool) -> Void = { _ in }
    private(set) var isPressing = false
    private var buffered: [RoomClient.Event] = []
    private var head = 0
    private var waiting: (waiter: EventWaiter, continuation: CheckedContinuation<RoomClient.Event?, Never>)?
    private var finished = false

    init(limit: Int, hook: (@Sendable (RoomClient.Event) -> Void)?) {
        self.limit = max(2, limit)
        self.hook = hook
    }

    var count: Int { buffered.count - head }

    /// Hands `event` to the waiting consumer, or buffers it.
    func yield(_ event: RoomClient.Event) {
        if let hook { return hook(event) }
        if let waiting {
            self.waiting = nil
            return waiting.continuation.resume(returning: event)
        }
        buffered.append(event)
        if !isPressing, count >= limit {
            isPressing = true
            pressure(true)
        }
    }

    /// The consumer asks for the next event.
    func next(_ waiter: EventWaiter, _ continuation: CheckedContinuation<RoomClient.Event?, Never>) {
        if waiter.cancelled.load(ordering: .sequentiallyConsistent) { return continuation.resume(returning: nil) }
        guard head < buffered.count else {
            if finished { return continuation.resume(returning: nil) }
            // A second consumer takes the first one's place; the first gets nil.
            waiting?.continuation.resume(returning: nil)
            waiting = (waiter, continuation)
            return
        }
        let event = buffered[head]
        head += 1
        if head == buffered.count {
            buffered.removeAll(keepingCapacity: buffered.count <= limit)
            head = 0
        } else if head > 64, head * 2 > buffered.count {
            buffered.removeFirst(head)
            head = 0
        }
        if isPressing, count <= limit / 2 {
            isPressing = false
            pressure(false)
        }
        continuation.resume(returning: event)
    }

    /// The consumer's task was cancelled: its call returns nil.
    func cancel(_ waiter: EventWaiter) {
        guard let waiting, waiting.waiter === waiter else { return }
        self.waiting = nil
        waiting.continuation.resume(returning: nil)
    }

    /// No event comes any more: the consumer gets what is buffered, then nil.
    func finish() {
        guard !finished else { return }
        finished = true
        if isPressing {
            isPressing = false
            pressure(false)
        }
        if let waiting {
            self.waiting = nil
            waiting.continuation.resume(returning: nil)
        }
    }
}
