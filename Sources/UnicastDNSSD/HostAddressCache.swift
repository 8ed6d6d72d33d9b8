import Synchronization

/// The addresses of the hosts looked up during one read of a zone, so that instances on the
/// same host (a zone may list a thousand that all name one target) ask for its A and AAAA
/// records once. Concurrent resolves of the same host share one lookup.
///
/// Cancellation is per waiter: a cancelled resolve stops waiting at once (with `.cancelled`)
/// and the others sharing its lookup keep waiting for it; the lookup itself is cancelled only
/// when no waiter remains (and a later resolve of that host starts a new one).
///
/// Only definite outcomes are kept: a lookup that timed out or could not reach the server (one
/// lost datagram) is handed to its waiters and forgotten, so the next resolve of the host asks
/// again.
///
/// Bounded by its user: one cache lives for one read of a zone, whose resolves are capped.
public final class HostAddressCache: Sendable {
    private typealias Outcome = Result<[IPAddress], UnicastDNSSDError>

    private enum Entry {
        /// A lookup under way (`id` tells it from a later one of the same host) and the resolves
        /// waiting for it, by waiter number.
        case running(id: Int, task: Task<Void, Never>, waiters: [Int: CheckedContinuation<Outcome, Never>])
        /// A finished lookup with a definite outcome (addresses, or a failure that asking again
        /// within the read would repeat); see `isDefinite`.
        case done(Outcome)
    }

    private struct State {
        var entries: [[[UInt8]]: Entry] = [:]
        /// Numbers waiters and lookups.
        var counter = 0
    }

    /// Guards every entry; continuations are resumed outside it.
    private let state = Mutex(State())

    public init() {}

    /// The addresses of `host`, from `lookUp` the first time and from the cache (or the lookup
    /// under way) after that.
    /// - Throws: the lookup's error, or `.cancelled` when the calling task is cancelled.
    func addresses(of host: DNSName,
                   lookUp: @escaping @Sendable () async throws(UnicastDNSSDError) -> [IPAddress]) async throws(UnicastDNSSDError) -> [IPAddress] {
        let key = host.labels.map(DNSName.lowercased)
        let waiter = state.withLock { state in
            state.counter += 1
            return state.counter
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let now = state.withLock { state -> Outcome? in
                    // The handler may have run before this waiter was registered.
                    if Task.isCancelled { return .failure(Self.cancelled) }
                    switch state.entries[key] {
                    case .done(let outcome):
                        return outcome
                    case .running(let id, let task, var waiters):
                        waiters[waiter] = continuation
                        state.entries[key] = .running(id: id, task: task, waiters: waiters)
                    case nil:
                        state.counter += 1
                        let id = state.counter
                        let task = Task { [self] in
                            let outcome: Outcome
                            do throws(UnicastDNSSDError) { outcome = .success(try await lookUp()) } catch { outcome = .failure(error) }
                            finish(key, id: id, outcome)
                        }
                        state.entries[key] = .running(id: id, task: task, waiters: [waiter: continuation])
                    }
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
        return try outcome.get()
    }

    /// Records the outcome of lookup `id` and hands it to its waiters.
    private func finish(_ key: [[UInt8]], id: Int, _ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard case .running(id, _, let waiters) = state.entries[key] else { return [] }
            state.entries[key] = Self.isDefinite(outcome) ? .done(outcome) : nil
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Ends `waiter`'s wait with `.cancelled`, and cancels the lookup if no one else waits for it.
    private func leave(_ key: [[UInt8]], waiter: Int) {
        let left = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard case .running(let id, let task, var waiters) = state.entries[key],
                  let continuation = waiters.removeValue(forKey: waiter) else { return nil }
            if waiters.isEmpty {
                state.entries[key] = nil
                task.cancel()
            } else {
                state.entries[key] = .running(id: id, task: task, waiters: waiters)
            }
            return continuation
        }
        left?.resume(returning: .failure(Self.cancelled))
    }

    /// Whether asking again would give the same outcome: an answer, or a failure the server
    /// stated (not a timeout, an unreachable server, a server error or a cancellation).
    private static func isDefinite(_ outcome: Outcome) -> Bool {
        guard case .failure(let error) = outcome else { return true }
        return ![.timeout, .unreachable, .connectionRefused, .server, .cancelled].contains(error.code)
    }

    private static var cancelled: UnicastDNSSDError {
        UnicastDNSSDError(.cancelled, "the address lookup was cancelled")
    }
}
