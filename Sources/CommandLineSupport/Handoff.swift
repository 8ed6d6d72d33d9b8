import Dispatch
import Synchronization

/// Values from a producer to one consuming task, at most `capacity` of them waiting: while
/// they do, the producer waits too (a thread blocks in `put`, a task suspends in `enqueue`),
/// so a slow consumer slows a fast producer down without buffering it.
///
/// Used for standard input's lines (`StandardInputLines.lines`: a reading thread puts) and by
/// svc-publish for the lines it has read and that wait to be sent (a reading task enqueues).
///
/// - Important: one producer at a time (a thread or a task), and one consuming task at a time.
public final class Handoff<Element: Sendable>: Sendable {
    private struct State {
        var waiting: [Element] = []
        var ended = false
        var consumer: CheckedContinuation<Element?, Never>?
        /// The producing thread is blocked in `put` (on `room`).
        var threadWaits = false
        /// The producing task is suspended in `enqueue`.
        var producer: CheckedContinuation<Void, Never>?
    }

    /// What a producer finds when it comes with a value.
    private enum Arrival {
        /// Taken: by the waiting consumer (resumed with it outside the lock), or into `waiting`.
        case taken(CheckedContinuation<Element?, Never>?)
        case full
        case ended
    }

    /// How many values may wait for the consumer.
    public let capacity: Int
    private let state = Mutex(State())
    /// Signalled when the blocked producing thread may put its value.
    private let room = DispatchSemaphore(value: 0)

    public init(capacity: Int) { self.capacity = max(1, capacity) }

    private func arrive(_ element: Element, refusingAfterEnd: Bool) -> Arrival {
        state.withLock { state in
            if refusingAfterEnd && state.ended { return .ended }
            if let consumer = state.consumer {
                state.consumer = nil
                return .taken(consumer)
            }
            guard state.waiting.count >= capacity else {
                state.waiting.append(element)
                return .taken(nil)
            }
            return .full
        }
    }

    /// Hands a value over from a thread, blocking it while `capacity` values wait.
    public func put(_ element: Element) {
        while true {
            switch arrive(element, refusingAfterEnd: false) {
            case .taken(let consumer):
                consumer?.resume(returning: element)
                return
            case .full, .ended:
                // Checked again under the lock: a value may have been taken meanwhile.
                let wait = state.withLock { state in
                    guard state.waiting.count >= capacity else { return false }
                    state.threadWaits = true
                    return true
                }
                if wait { room.wait() }
            }
        }
    }

    /// Hands a value over from a task, suspending it while `capacity` values wait. Returns
    /// false, and the value was not handed over, when the task is cancelled meanwhile or the
    /// hand-off was finished.
    public func enqueue(_ element: Element) async -> Bool {
        while true {
            switch arrive(element, refusingAfterEnd: true) {
            case .taken(let consumer):
                consumer?.resume(returning: element)
                return true
            case .ended:
                return false
            case .full:
                break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        // Checked under the lock: a cancellation handler that ran before found
                        // no producer to resume, and the flag is already set.
                        if Task.isCancelled || state.ended || state.waiting.count < capacity { return true }
                        state.producer = producer
                        return false
                    }
                    if now { producer.resume() }
                }
            } onCancel: {
                let producer = state.withLock { state in
                    defer { state.producer = nil }
                    return state.producer
                }
                producer?.resume()
            }
            if Task.isCancelled { return false }
        }
    }

    /// Takes every value that waits now, without waiting and without letting a blocked
    /// producer go on: for a consumer that stops and must account for what was handed over.
    public func removeWaiting() -> [Element] {
        state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }
    }

    /// No value comes any more: the consumer gets what waits, then nil; `enqueue` refuses.
    public func finish() {
        let (consumer, producer) = state.withLock { state in
            state.ended = true
            defer {
                state.consumer = nil
                state.producer = nil
            }
            return (state.consumer, state.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    /// The next value, or nil at the end or when the calling task is cancelled (the values
    /// that wait then stay for the next call).
    public func take() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let (result, thread, producer) = state.withLock { state -> (Element??, Bool, CheckedContinuation<Void, Never>?) in
                    if Task.isCancelled { return (.some(nil), false, nil) }
                    guard state.waiting.isEmpty else {
                        let thread = state.threadWaits
                        state.threadWaits = false
                        let producer = state.producer
                        state.producer = nil
                        return (.some(state.waiting.removeFirst()), thread, producer)
                    }
                    if state.ended { return (.some(nil), false, nil) }
                    state.consumer = continuation
                    return (nil, false, nil)
                }
                if thread { room.signal() }
                producer?.resume()
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }
}
