import Synchronization

/// An await in a test did not finish in time (`withTimeout`).
public struct TimeLimitExceeded: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration

    public var description: String { "\(what) did not finish within \(limit): it waits for something that never came" }
}

/// Runs `body` and returns its result, or throws `TimeLimitExceeded` once `seconds` passed:
/// for an await in a test that depends on something another thread or task must do, so that a
/// bug fails the test instead of hanging the whole run (XCTest has no per-test timeout here).
///
/// `body` runs in a task of its own, which is cancelled when time is up; one that ignores
/// cancellation (a continuation nobody resumes) is left behind, and the test goes on.
/// - Parameters:
///   - seconds: the limit, on the wall clock: generous (a loaded CI machine is slow), since a
///     passing test never waits for it.
///   - what: said in the error, e.g. "the client's outcome".
public func withTimeout<Value: Sendable>(seconds: Double = 30, _ what: String,
                                         _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let limit = Duration.milliseconds(Int64(seconds * 1000))
    let race = Race<Value>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            race.start(continuation,
                       Task { race.finish(await Result { try await body() }) },
                       Task {
                           try? await Task.sleep(for: limit)
                           race.finish(.failure(TimeLimitExceeded(what: what, limit: limit)))
                       })
        }
    } onCancel: {
        race.cancel()
    }
}

/// The body and the timer of one `withTimeout`: the first to finish resumes the caller and
/// cancels the other.
private final class Race<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var finished: Result<Value, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<Value, any Error>, _ body: Task<Void, Never>, _ timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Result<Value, any Error>? in
            state.tasks = [body, timer]
            guard let finished = state.finished else {
                state.continuation = continuation
                return nil
            }
            return finished
        }
        if let finished {
            timer.cancel()
            continuation.resume(with: finished)
        }
    }

    func finish(_ result: Result<Value, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) in
            guard state.finished == nil else { return (nil, []) }
            state.finished = result
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        continuation?.resume(with: result)
    }

    func cancel() {
        state.withLock { $0.tasks }.forEach { $0.cancel() }
    }
}

extension Result where Failure == any Error {
    /// The result of an async throwing body.
    fileprivate init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
