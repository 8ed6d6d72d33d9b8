/// A service instance as a browser finds it in a unicast zone.
public struct ResolvedInstance: Sendable, Hashable {
    public let instanceName: String
    public let host: DNSName
    public let port: UInt16
    public let txt: [[UInt8]]
    public let addresses: [IPAddress]
}

/// Register, refresh, withdraw, browse and resolve DNS-SD services in a unicast zone (RFC 6763)
/// through any `UnicastDNSServer`: the logic of unicast DNS-SD, apart from the wire.
public struct UnicastServiceDirectory<Server: UnicastDNSServer>: Sendable {
    /// The most instances one browse lists.
    public static var maximumInstances: Int { 1000 }
    /// The most addresses one resolve returns.
    public static var maximumAddresses: Int { 16 }

    public let server: Server

    public init(server: Server) { self.server = server }

    /// Registers `instance` by a signed update whose prerequisite is "the name is not in use";
    /// when it is, `conflict` decides: take back our own leftover, try another name, or fail.
    /// - Parameters:
    ///   - ttl: the records' TTL, in seconds (short: records outlive a crashed publisher).
    ///   - isOurLeftover: given the port of an SRV on our host, whether no process of ours
    ///     serves it any more (so the records are provably a leftover of ours).
    /// - Returns: the instance as registered (renamed after a conflict).
    /// - Throws: `.conflict` when the policy gives up, or the server's error.
    public func register(_ instance: ServiceInstance, ttl: UInt32, conflict: ConflictPolicy,
                         isOurLeftover: @Sendable (UInt16) -> Bool) async throws(UnicastDNSSDError) -> ServiceInstance {
        var current = instance
        var attempt = 1
        while true {
            let name = try current.instanceDNSName()
            let additions = try current.records(ttl: ttl).map(DNSUpdate.Change.add)
            let outcome = try await server.update(DNSUpdate(zone: current.zone, prerequisites: [.nameNotInUse(name)], changes: additions))
            if outcome == .applied { return current }
            let existing = try await server.query(name, .srv).filter { $0.name.sameName(as: name) }
            var targets: [DNSName] = []
            var leftover = !existing.isEmpty
            for record in existing {
                guard case .service(_, _, let port, let target) = record.data else { continue }
                targets.append(target)
                leftover = leftover && target.sameName(as: current.host) && isOurLeftover(port)
            }
            switch conflict.decide(name: current.instanceName, existingTargets: targets, ourHost: current.host, ourLeftover: leftover, attempt: attempt) {
            case .takeBack:
                // Replace exactly what we saw; if it changed meanwhile, look again.
                let seen = existing.map(DNSUpdate.Prerequisite.recordExists)
                let replace = DNSUpdate(zone: current.zone, prerequisites: seen, changes: [.deleteName(name)] + additions)
                if try await server.update(replace) == .applied { return current }
            case .rename(let next):
                current = try current.renamed(next)
            case .fail(let error):
                throw error
            }
            attempt += 1
            guard attempt <= ConflictPolicy.maximumAttempts else {
                throw UnicastDNSSDError(.conflict, "the name \"\(instance.instanceName)\" kept changing hands in the zone; try again later or choose another --name")
            }
        }
    }

    /// Renews the TTLs of a registration if its SRV is still ours; with `previous`, the
    /// address records `previous` had and `instance` has not are removed in the same update
    /// (the host's addresses changed).
    /// - Returns: false when the SRV is gone or another's: the caller registers again.
    public func refresh(_ instance: ServiceInstance, ttl: UInt32, replacing previous: ServiceInstance? = nil) async throws(UnicastDNSSDError) -> Bool {
        let ours = try instance.serviceRecord(ttl: ttl)
        let gone = (previous?.addresses ?? []).filter { !instance.addresses.contains($0) }
            .map { DNSUpdate.Change.deleteRecord(ResourceRecord(name: instance.host, ttl: 0, data: .address($0))) }
        let update = DNSUpdate(zone: instance.zone, prerequisites: [.recordExists(ours)],
                               changes: gone + (try instance.records(ttl: ttl).map(DNSUpdate.Change.add)))
        return try await server.update(update) == .applied
    }

    /// Removes the instance's PTR, SRV and TXT if its SRV is still ours (someone else's
    /// registration of the same name is left alone). The host's address records stay: other
    /// instances on this host may point at them.
    /// - Returns: false when the records were not ours (or not there).
    @discardableResult
    public func withdraw(_ instance: ServiceInstance) async throws(UnicastDNSSDError) -> Bool {
        let name = try instance.instanceDNSName()
        let pointer = ResourceRecord(name: try instance.serviceDNSName(), ttl: 0, data: .pointer(name))
        let update = DNSUpdate(zone: instance.zone, prerequisites: [.recordExists(try instance.serviceRecord(ttl: 0))],
                               changes: [.deleteRecord(pointer), .deleteName(name)])
        return try await server.update(update) == .applied
    }

    /// What `withdrawLeftover` found and did.
    public enum LeftoverOutcome: Sendable, Equatable {
        /// The records were ours and are gone; the SRV's port.
        case withdrawn(port: UInt16)
        /// The name has no SRV in the zone.
        case nothingThere
        /// The SRV points at another host: not ours to remove.
        case anotherHost(DNSName)
        /// The SRV is on our host, but its port is served: a publisher runs; stop it instead.
        case stillServed(port: UInt16)
    }

    /// Removes what a crashed publisher of this host left under `instanceName` (PTR, SRV,
    /// TXT), only when its SRV points at `host` at a port nothing serves, and only if the SRV
    /// is still the one seen (a prerequisite).
    /// - Parameter isServed: whether something on this host accepts connections on a port.
    public func withdrawLeftover(_ instanceName: String, type: ServiceType, in zone: DNSName, host: DNSName,
                                 isServed: @Sendable (UInt16) -> Bool) async throws(UnicastDNSSDError) -> LeftoverOutcome {
        let service = try type.name.appending(zone)
        let name = try service.prepending(Array(instanceName.utf8))
        let existing = try await server.query(name, .srv).filter { $0.name.sameName(as: name) }
        var ports: [UInt16] = []
        for record in existing {
            guard case .service(_, _, let port, let target) = record.data else { continue }
            guard target.sameName(as: host) else { return .anotherHost(target) }
            ports.append(port)
        }
        guard let port = ports.first else { return .nothingThere }
        if let served = ports.first(where: isServed) { return .stillServed(port: served) }
        let pointer = ResourceRecord(name: service, ttl: 0, data: .pointer(name))
        let update = DNSUpdate(zone: zone, prerequisites: existing.map(DNSUpdate.Prerequisite.recordExists),
                               changes: [.deleteRecord(pointer), .deleteName(name)])
        guard try await server.update(update) == .applied else {
            throw UnicastDNSSDError(.conflict, "the records of \"\(instanceName)\" changed while they were being withdrawn; run --withdraw again")
        }
        return .withdrawn(port: port)
    }

    /// The zone's SOA serial: browse again only when it changed since the last browse.
    public func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? {
        try await server.serial(of: zone)
    }

    /// The instance names of `type` in `zone`, sorted, without duplicates; PTRs that do not
    /// point one label below the type's name are ignored.
    public func browse(_ type: ServiceType, in zone: DNSName) async throws(UnicastDNSSDError) -> [String] {
        let service = try type.name.appending(zone)
        var names = Set<String>()
        for record in try await server.query(service, .ptr) where record.name.sameName(as: service) {
            guard case .pointer(let target) = record.data, target.labels.count == service.labels.count + 1,
                  target.parent?.sameName(as: service) == true, let label = target.labels.first else { continue }
            names.insert(String(decoding: label, as: UTF8.self))
            if names.count >= Self.maximumInstances { break }
        }
        return names.sorted()
    }

    /// The instance's host, port, TXT and addresses, or nil when it has no SRV.
    public func resolve(_ instanceName: String, type: ServiceType, in zone: DNSName) async throws(UnicastDNSSDError) -> ResolvedInstance? {
        let name = try type.name.appending(zone).prepending(Array(instanceName.utf8))
        guard let srv = try await server.query(name, .srv).first(where: { $0.name.sameName(as: name) }),
              case .service(_, _, let port, let target) = srv.data else { return nil }
        var txt: [[UInt8]] = []
        for record in try await server.query(name, .txt) where record.name.sameName(as: name) {
            if case .text(let strings) = record.data { txt = strings; break }
        }
        var addresses: [IPAddress] = []
        for type in [RecordType.a, .aaaa] {
            for record in try await server.query(target, type) where record.name.sameName(as: target) {
                if case .address(let address) = record.data, !addresses.contains(address), addresses.count < Self.maximumAddresses {
                    addresses.append(address)
                }
            }
        }
        return ResolvedInstance(instanceName: instanceName, host: target, port: port, txt: txt, addresses: addresses)
    }
}
