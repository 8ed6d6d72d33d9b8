import Dispatch
import TransportCore

/// Bridges a one-shot DNS-SD operation (resolve, address lookup, first registration reply)
/// to `async`: the first of result, timeout or task cancellation wins; the operation's
/// lookups are cancelled when it ends.
///
/// - Important: every method runs on `dnssdQueue`.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private var continuation: CheckedContinuation<Value, any Error>?
    private var early: Result<Value, any Error>?
    private var lookups: [DaemonLookup] = []
    private var timer: DispatchSourceTimer?
    private(set) var isFinished = false

    /// Keeps `lookup` until the operation ends, then cancels it.
    func own(_ lookup: DaemonLookup) {
        assertOnDNSSDQueue()
        if isFinished { lookup.cancel() } else { lookups.append(lookup) }
    }

    /// Ends the operation once; later calls are ignored.
    func finish(_ result: Result<Value, any Error>) {
        assertOnDNSSDQueue()
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        lookups.forEach { $0.cancel() }
        lookups = []
        if let continuation {
            continuation.resume(with: result)
            self.continuation = nil
        } else {
            early = result
        }
    }

    fileprivate func begin(_ continuation: CheckedContinuation<Value, any Error>, timeout: Duration, onTimeout: @escaping (_ daemonTookAll: Bool) -> any Error) {
        assertOnDNSSDQueue()
        if let early {
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        let timer = DispatchSource.makeTimerSource(queue: dnssdQueue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(timeout.nanoseconds)))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            finish(.failure(onTimeout(!lookups.contains { !$0.isTaken })))
        }
        timer.resume()
        self.timer = timer
    }

    /// Runs `start` on the DNS-SD queue and waits for `finish`.
    /// - Parameters:
    ///   - timeout: how long to wait before failing with `onTimeout(daemonTookAll)`, where
    ///     `daemonTookAll` is false when a lookup it owns was not taken by the daemon yet (the
    ///     daemon has not answered: its connection or the call that creates the lookup still
    ///     waits), so that nothing is said about the network.
    ///   - start: starts the operation; it calls `finish` (now or from a callback) and `own`
    ///     for each lookup it starts. A thrown error ends the operation.
    /// - Throws: what `finish` was given, `onTimeout()`, or `CancellationError`.
    static func run(
        timeout: Duration,
        onTimeout: @escaping @Sendable (_ daemonTookAll: Bool) -> any Error,
        start: @escaping @Sendable (OneShot<Value>) throws -> Void
    ) async throws -> Value {
        let operation = OneShot<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                dnssdQueue.async {
                    operation.begin(continuation, timeout: timeout, onTimeout: onTimeout)
                    guard !operation.isFinished else { return }
                    do { try start(operation) } catch { operation.finish(.failure(error)) }
                }
            }
        } onCancel: {
            dnssdQueue.async { operation.finish(.failure(CancellationError())) }
        }
    }
}
