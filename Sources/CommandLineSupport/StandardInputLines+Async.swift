import Dispatch
import Synchronization

extension StandardInputLines {
    /// Standard input's lines as an async sequence, read on a thread of their own (see
    /// `start`): at most `bufferedLines` wait for the consumer, and while they do nothing more
    /// is read, so a consumer that waits (a room's `send`) slows a fast producer (a pipe) down
    /// without buffering it. The sequence ends at end of input or on a read error.
    ///
    /// - Important: call it once per process, and iterate from one task at a time. A cancelled
    ///   `next()` returns nil; the lines read meanwhile stay for the next call.
    public static func lines(maximumLineLength: Int = 65536, bufferedLines: Int = 64) -> Lines {
        let handoff = LineHandoff(capacity: bufferedLines)
        start(maximumLineLength: maximumLineLength, onLine: { handoff.put($0) }, onEnd: { handoff.finish() })
        return Lines(handoff: handoff)
    }

    /// See `StandardInputLines.lines`.
    public struct Lines: AsyncSequence, Sendable {
        let handoff: LineHandoff

        public func makeAsyncIterator() -> Iterator { Iterator(handoff: handoff) }

        /// Takes the next line, waiting for the reading thread.
        public struct Iterator: AsyncIteratorProtocol {
            let handoff: LineHandoff

            /// The next line (without its ending), or nil at the end of input or when the
            /// calling task was cancelled.
            public mutating func next() async -> String? { await handoff.take() }
        }
    }
}

/// Lines from the reading thread to the consuming task: the thread blocks while `capacity`
/// lines wait; the task suspends while none does.
final class LineHandoff: Sendable {
    private struct State {
        var lines: [String] = []
        var ended = false
        var consumer: CheckedContinuation<String?, Never>?
        var producerWaits = false
    }

    private let capacity: Int
    private let state = Mutex(State())
    /// Signalled when the blocked reading thread may put its line.
    private let room = DispatchSemaphore(value: 0)

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Hands a line over, blocking the reading thread while `capacity` lines wait.
    func put(_ line: String) {
        while true {
            let (consumer, full) = state.withLock { state -> (CheckedContinuation<String?, Never>?, Bool) in
                if let consumer = state.consumer {
                    state.consumer = nil
                    return (consumer, false)
                }
                guard state.lines.count >= capacity else {
                    state.lines.append(line)
                    return (nil, false)
                }
                state.producerWaits = true
                return (nil, true)
            }
            if let consumer { return consumer.resume(returning: line) }
            if !full { return }
            room.wait()
        }
    }

    /// No line comes any more: the consumer gets what waits, then nil.
    func finish() {
        let consumer = state.withLock { state in
            state.ended = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume(returning: nil)
    }

    /// The next line, or nil at the end or on cancellation.
    func take() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let (result, wake) = state.withLock { state -> (String??, Bool) in
                    // Checked under the lock: a cancellation handler that ran before found no
                    // consumer to resume, and the flag is already set.
                    if Task.isCancelled { return (.some(nil), false) }
                    guard state.lines.isEmpty else {
                        let wake = state.producerWaits
                        state.producerWaits = false
                        return (.some(state.lines.removeFirst()), wake)
                    }
                    if state.ended { return (.some(nil), false) }
                    state.consumer = continuation
                    return (nil, false)
                }
                if wake { room.signal() }
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
