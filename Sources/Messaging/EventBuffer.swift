import Synchronization

/// One call of `next()`: its cancellation is seen on the executor whichever comes first, the
/// cancellation or the registration.
final class EventWaiter: Sendable {
    let cancelled = Atomic(false)
}

/// The events between a room type and its consumer (`RoomClient.events`, `RoomServer.events`).
///
/// - Important: loop-bound: every method runs on its owner's executor; not `Sendable`.
final class EventBuffer<Event: Sendable> {
    /// From this many buffered events on, `pressure(true)` asks to stop reading.
    let limit: Int
    /// From this much buffered weight on (`weight`), `pressure(true)` asks to stop reading
    /// too: a few large events (a PRESENCE of 65,535 names) weigh as much as many small ones.
    let weightLimit: Int
    /// What an event costs toward `weightLimit` (about the bytes it holds).
    private let weight: (Event) -> Int
    private var bufferedWeight = 0
    /// When set (the fuzz target and white-box tests), every event goes here at once, with no
    /// buffer and no back-pressure.
    private let hook: ((Event) -> Void)?
    /// Called with true when the buffer reaches `limit` or `weightLimit`, with false when it
    /// is down to half of both.
    var pressure: (Bool) -> Void = { _ in }
    private(set) var isPressing = false
    private var buffered: [Event] = []
    private var head = 0
    private var waiting: (waiter: EventWaiter, continuation: CheckedContinuation<Event?, Never>)?
    private var finished = false

    init(limit: Int, weightLimit: Int = .max, weight: @escaping (Event) -> Int = { _ in 0 }, hook: ((Event) -> Void)?) {
        self.limit = max(2, limit)
        self.weightLimit = max(2, weightLimit)
        self.weight = weight
        self.hook = hook
    }

    var count: Int { buffered.count - head }

    /// Hands `event` to the waiting consumer, or buffers it.
    func yield(_ event: Event) {
        if let hook { return hook(event) }
        if let waiting {
            self.waiting = nil
            return waiting.continuation.resume(returning: event)
        }
        buffered.append(event)
        bufferedWeight += max(0, weight(event))
        if !isPressing, count >= limit || bufferedWeight >= weightLimit {
            isPressing = true
            pressure(true)
        }
    }

    /// The consumer asks for the next event.
    func next(_ waiter: EventWaiter, _ continuation: CheckedContinuation<Event?, Never>) {
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
        bufferedWeight = max(0, bufferedWeight - max(0, weight(event)))
        if head == buffered.count {
            buffered.removeAll(keepingCapacity: buffered.count <= limit)
            head = 0
        } else if head > 64, head * 2 > buffered.count {
            buffered.removeFirst(head)
            head = 0
        }
        if isPressing, count <= limit / 2, bufferedWeight <= weightLimit / 2 {
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
