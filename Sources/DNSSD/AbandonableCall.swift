import Dispatch
import Synchronization

/// Awaits a call that blocks on D-Bus (creating a browse: up to D-Bus's 25 s reply timeout
/// each when avahi-daemon is hung or stopped), run on a serial queue, so that the awaiting
/// task can give up on it.
///
/// On cancellation the await ends at once with `CancellationError`; the call, if it already
/// runs, is abandoned: should it succeed later, `abandon` is given its value on the queue right
/// after it returns, to undo it (a browse is cancelled). A call abandoned before it began is
/// not made. The continuation is resumed exactly once.
enum AbandonableCall {
    /// Runs `call` on `queue` and waits for it, or for the task's cancellation.
    /// - Throws: what `call` threw, or `CancellationError`.
    static func run<Value: Sendable>(on queue: DispatchQueue, _ call: @escaping @Sendable () throws -> Value,
                                     abandon: @escaping @Sendable (Value) -> Void) async throws -> Value {
        let waiter = Waiter<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.wait(continuation) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                queue.async {
                    guard waiter.isWaiting else { return }
                    let result = Result { try call() }
                    if let continuation = waiter.take() {
                        continuation.resume(with: result)
                    } else if case .success(let value) = result {
                        abandon(value)
                    }
                }
            }
        } onCancel: {
            waiter.abandon()?.resume(throwing: CancellationError())
        }
    }

    /// Who resumes the continuation: the call's end (`take`) or the cancellation (`abandon`),
    /// whichever comes first; the other gets nil.
    private final class Waiter<Value: Sendable>: Sendable {
        private enum State {
            case ready
            case waiting(CheckedContinuation<Value, any Error>)
            case abandoned
            case finished
        }
        private let state = Mutex<State>(.ready)

        /// Keeps the continuation; false when the wait was abandoned before it began.
        func wait(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
            state.withLock { state in
                guard case .ready = state else { return false }
                state = .waiting(continuation)
                return true
            }
        }

        var isWaiting: Bool {
            state.withLock { state in
                if case .waiting = state { return true }
                return false
            }
        }

        /// The continuation, for the call's result; nil once abandoned.
        func take() -> CheckedContinuation<Value, any Error>? {
            state.withLock { state in
                guard case .waiting(let continuation) = state else { return nil }
                state = .finished
                return continuation
            }
        }

        /// The continuation, for `CancellationError`; nil when the call's result took it.
        func abandon() -> CheckedContinuation<Value, any Error>? {
            state.withLock { state in
                switch state {
                case .ready:
                    state = .abandoned
                    return nil
                case .waiting(let continuation):
                    state = .abandoned
                    return continuation
                case .abandoned, .finished:
                    return nil
                }
            }
        }
    }
}
