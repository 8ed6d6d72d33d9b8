extension UnicastServiceDirectory {
    /// How many resolves of `resolve(_:type:in:deliver:)` run at once; each keeps its
    /// exchanges' deadline, so a server that never answers holds a batch for at most a few
    /// deadlines.
    public static var concurrentResolves: Int { 4 }

    /// Resolves `names` `concurrentResolves` at a time, each host's addresses looked up once
    /// for all of them (one `HostAddressCache`), and hands each outcome to `deliver` in the
    /// order of `names`, one batch after another.
    /// - Parameter deliver: takes a name and its outcome (nil: the instance has no SRV);
    ///   returns false to stop (no further batch is started).
    /// - Returns: false when `deliver` stopped it.
    public func resolve(_ names: [String], type: ServiceType, in zone: DNSName,
                        deliver: (String, Result<ResolvedInstance?, UnicastDNSSDError>) -> Bool) async -> Bool {
        let cache = HostAddressCache()
        var start = 0
        while start < names.count {
            let batch = Array(names[start..<min(start + Self.concurrentResolves, names.count)])
            start += batch.count
            let results = await withTaskGroup(of: (Int, Result<ResolvedInstance?, UnicastDNSSDError>).self) { group in
                for (index, name) in batch.enumerated() {
                    group.addTask {
                        do throws(UnicastDNSSDError) {
                            return (index, .success(try await resolve(name, type: type, in: zone, cache: cache)))
                        } catch {
                            return (index, .failure(error))
                        }
                    }
                }
                var results = [Result<ResolvedInstance?, UnicastDNSSDError>](repeating: .success(nil), count: batch.count)
                for await (index, result) in group { results[index] = result }
                return results
            }
            for (name, result) in zip(batch, results) {
                guard deliver(name, result) else { return false }
            }
        }
        return true
    }
}
