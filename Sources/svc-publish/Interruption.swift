import CommandLineSupport
import Dispatch
import Synchronization

/// SIGINT and SIGTERM for the whole run of svc-publish, from before the first registration to
/// the end: what a signal does changes as the run goes on (cancel the registration, close the
/// room, give up a withdrawal), and a signal that comes between two of them is kept for the
/// next one instead of being lost or killing the process.
final class Interruption: Sendable {
    /// The first signal received, and what the next one does; guarded by the mutex.
    private struct State {
        var signal: Int32?
        var action: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// The signal sources; set once in `init`, cancelled when this is released.
    private let sources = Mutex<TerminationSignals?>(nil)

    init() {
        let signals = TerminationSignals(queue: DispatchQueue(label: "svc.publish.signals")) { [weak self] number in
            self?.received(number)
        }
        sources.withLock { $0 = signals }
    }

    /// The first signal received (SIGINT or SIGTERM), or nil.
    var signal: Int32? { state.withLock { $0.signal } }

    /// Calls `action` on every signal from now on (at once when one came already).
    func onSignal(_ action: @escaping @Sendable () -> Void) {
        let pending = state.withLock { state -> Bool in
            state.action = action
            return state.signal != nil
        }
        if pending { action() }
    }

    /// Runs `body` in a task of its own that a signal cancels; once it ends, signals are kept
    /// for the next `onSignal`.
    func cancelling<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        onSignal { task.cancel() }
        let result = await task.result
        state.withLock { $0.action = nil }
        return try result.get()
    }

    /// Calls `action` on every signal from now on, but not for one that came already.
    func onFurtherSignal(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.action = action }
    }

    private func received(_ number: Int32) {
        let action = state.withLock { state in
            state.signal = state.signal ?? number
            return state.action
        }
        action?()
    }
}

extension ExitCode {
    /// The code of a tool ended by `signal` before its work was under way: 128 + the signal's
    /// number, as shells report a process that signal killed (130 for SIGINT, 143 for SIGTERM).
    static func signalled(_ signal: Int32) -> ExitCode { ExitCode(128 + signal) }
}
