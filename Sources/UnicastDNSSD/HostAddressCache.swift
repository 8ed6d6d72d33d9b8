import Synchronization

/// The addresses of the hosts looked up during one read of a zone, so that instances on the
/// same host (a zone may list a thousand that all name one target) ask for its A and AAAA
/// records once. Concurrent resolves of the same host share one lookup.
///
/// Bounded by its user: one cache lives for one read of a zone, whose resolves are capped.
public final class HostAddressCache: Sendable {
    private let lookups = Mutex<[[[UInt8]]: Task<Result<[IPAddress], UnicastDNSSDError>, Never>]>([:])

    public init() {}

    /// The addresses of `host`, from `lookUp` the first time and from the cache after that
    /// (a failed lookup is remembered too: within one read, asking again would fail again).
    func addresses(of host: DNSName,
                   lookUp: @escaping @Sendable () async throws(UnicastDNSSDError) -> [IPAddress]) async throws(UnicastDNSSDError) -> [IPAddress] {
        let key = host.labels.map(DNSName.lowercased)
        let lookup = lookups.withLock { lookups in
            if let running = lookups[key] { return running }
            let task = Task { () async -> Result<[IPAddress], UnicastDNSSDError> in
                do throws(UnicastDNSSDError) { return .success(try await lookUp()) } catch { return .failure(error) }
            }
            lookups[key] = task
            return task
        }
        let result = await withTaskCancellationHandler { await lookup.value } onCancel: { lookup.cancel() }
        return try result.get()
    }
}
