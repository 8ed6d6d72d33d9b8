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
    /// The host's address records are replaced by the instance's (the publisher owns its host
    /// name), so addresses the host lost do not pile up.
    /// - Parameters:
    ///   - ttl: the records' TTL, in seconds (short: records outlive a crashed publisher).
    ///   - isOurLeftover: given the port of an SRV on our host, whether no process of ours
    ///     serves it any more. Records are a leftover of ours only when their TXT carries
    ///     our `key=` (the identity proves it, not the host name, which twins share), their
    ///     SRV is on our host, and this says its port is not served.
    /// - Returns: the instance as registered (renamed after a conflict).
    /// - Throws: `.conflict` when the policy gives up, or the server's error.
    public func register(_ instance: ServiceInstance, ttl: UInt32, conflict: ConflictPolicy,
                         isOurLeftover: @Sendable (UInt16) -> Bool) async throws(UnicastDNSSDError) -> ServiceInstance {
        var current = instance
        var attempt = 1
        while true {
            let name = try current.instanceDNSName()
            let additions = Self.replacingAddresses(of: current.host) + (try current.records(ttl: ttl).map(DNSUpdate.Change.add))
            let outcome = try await server.update(DNSUpdate(zone: current.zone, prerequisites: [.nameNotInUse(name)], changes: additions))
            if outcome == .applied { return current }
            let existing = try await server.query(name, .srv).filter { $0.name.sameName(as: name) }
            let texts = try await server.query(name, .txt).filter { $0.name.sameName(as: name) }
            var targets: [DNSName] = []
            var leftover = !existing.isEmpty && Self.carries(current.keyItem, texts)
            for record in existing {
                guard case .service(_, _, let port, let target) = record.data else { continue }
                targets.append(target)
                leftover = leftover && target.sameName(as: current.host) && isOurLeftover(port)
            }
            switch conflict.decide(name: current.instanceName, existingTargets: targets, ourHost: current.host, ourLeftover: leftover, attempt: attempt) {
            case .takeBack:
                // Replace exactly what we saw; if it changed meanwhile, look again.
                let seen = (existing + texts).map(DNSUpdate.Prerequisite.recordExists)
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

    /// Renews the TTLs of a registration if its SRV is still ours, replacing the host's
    /// address records by the instance's in the same update (the host's addresses changed,
    /// or someone added others).
    /// - Returns: false when the SRV is gone or another's: the caller registers again.
    public func refresh(_ instance: ServiceInstance, ttl: UInt32) async throws(UnicastDNSSDError) -> Bool {
        let ours = try instance.serviceRecord(ttl: ttl)
        let update = DNSUpdate(zone: instance.zone, prerequisites: [.recordExists(ours)],
                               changes: Self.replacingAddresses(of: instance.host) + (try instance.records(ttl: ttl).map(DNSUpdate.Change.add)))
        return try await server.update(update) == .applied
    }

    /// Removes the instance's PTR, SRV and TXT if its SRV is still ours (someone else's
    /// registration of the same name is left alone), and the host's address records when no
    /// other instance of the type points at the host (they stay when more than
    /// `maximumHostCheck` others would have to be looked at).
    /// - Returns: false when the records were not ours (or not there).
    @discardableResult
    public func withdraw(_ instance: ServiceInstance) async throws(UnicastDNSSDError) -> Bool {
        let name = try instance.instanceDNSName()
        let pointer = ResourceRecord(name: try instance.serviceDNSName(), ttl: 0, data: .pointer(name))
        let hostInUse = try await anotherInstanceUses(instance.host, type: instance.type, in: instance.zone, besides: instance.instanceName)
        let update = DNSUpdate(zone: instance.zone, prerequisites: [.recordExists(try instance.serviceRecord(ttl: 0))],
                               changes: [.deleteRecord(pointer), .deleteName(name)] + (hostInUse ? [] : Self.replacingAddresses(of: instance.host)))
        return try await server.update(update) == .applied
    }

    /// The most other instances `withdraw` looks at to decide whether the host's addresses
    /// are still used (each costs a query).
    public static var maximumHostCheck: Int { 32 }

    /// Whether an instance of `type` other than `instanceName` has its SRV on `host` (true,
    /// the safe answer, when there are too many to look at).
    private func anotherInstanceUses(_ host: DNSName, type: ServiceType, in zone: DNSName, besides instanceName: String) async throws(UnicastDNSSDError) -> Bool {
        let service = try type.name.appending(zone)
        let others = try await instanceLabels(service).filter { $0 != Array(instanceName.utf8) }
        guard others.count <= Self.maximumHostCheck else { return true }
        for label in others {
            let name = try service.prepending(label)
            for record in try await server.query(name, .srv) where record.name.sameName(as: name) {
                if case .service(_, _, _, let target) = record.data, target.sameName(as: host) { return true }
            }
        }
        return false
    }

    /// Deletes the host's A and AAAA sets (the additions that follow put back the live ones).
    private static func replacingAddresses(of host: DNSName) -> [DNSUpdate.Change] {
        [.deleteRecordSet(host, .a), .deleteRecordSet(host, .aaaa)]
    }

    /// Whether the TXT records carry `keyItem` and no other `key=`: the records are the
    /// registration of the identity that holds that key.
    private static func carries(_ keyItem: [UInt8]?, _ texts: [ResourceRecord]) -> Bool {
        guard let keyItem else { return false }
        var found = false
        for record in texts {
            guard case .text(let strings) = record.data else { continue }
            for item in strings where item.starts(with: Array("key=".utf8)) {
                guard item == keyItem else { return false }
                found = true
            }
        }
        return found
    }

    /// What `withdrawLeftover` found and did.
    public enum LeftoverOutcome: Sendable, Equatable {
        /// The records were ours and are gone; the SRV's port.
        case withdrawn(port: UInt16)
        /// The name has no SRV in the zone.
        case nothingThere
        /// The SRV points at another host: not ours to remove.
        case anotherHost(DNSName)
        /// The TXT does not carry our key: another identity's registration, not ours to remove.
        case anotherKey
        /// The SRV is on our host, but its port is served: a publisher runs; stop it instead.
        case stillServed(port: UInt16)
    }

    /// Removes what a crashed publisher of this host left under `instanceName` (PTR, SRV,
    /// TXT), only when its TXT carries our `keyItem`, its SRV points at `host` at a port
    /// nothing serves, and only if the SRV and TXT are still the ones seen (prerequisites).
    /// - Parameters:
    ///   - keyItem: our TXT item `key=<fingerprint>` (nil: no key here, so nothing is ours).
    ///   - isServed: whether something on this host accepts connections on a port.
    public func withdrawLeftover(_ instanceName: String, type: ServiceType, in zone: DNSName, host: DNSName, keyItem: [UInt8]?,
                                 isServed: @Sendable (UInt16) -> Bool) async throws(UnicastDNSSDError) -> LeftoverOutcome {
        let service = try type.name.appending(zone)
        let name = try service.prepending(Array(instanceName.utf8))
        let existing = try await server.query(name, .srv).filter { $0.name.sameName(as: name) }
        var services: [(port: UInt16, target: DNSName)] = []
        for record in existing {
            if case .service(_, _, let port, let target) = record.data { services.append((port, target)) }
        }
        guard let port = services.first?.port else { return .nothingThere }
        // The key says whose the records are; the host, whether this host can tell it is not served.
        let texts = try await server.query(name, .txt).filter { $0.name.sameName(as: name) }
        guard Self.carries(keyItem, texts) else { return .anotherKey }
        if let elsewhere = services.first(where: { !$0.target.sameName(as: host) }) { return .anotherHost(elsewhere.target) }
        let ports = services.map(\.port)
        if let served = ports.first(where: isServed) { return .stillServed(port: served) }
        let pointer = ResourceRecord(name: service, ttl: 0, data: .pointer(name))
        let update = DNSUpdate(zone: zone, prerequisites: (existing + texts).map(DNSUpdate.Prerequisite.recordExists),
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

    /// What one browse found.
    public struct Listing: Sendable, Equatable {
        /// The instance names, sorted, without duplicates.
        public let names: [String]
        /// How many more instances the zone lists than `maximumInstances` kept (the names kept
        /// are the first in byte order, so the same ones every time).
        public let cut: Int
        /// How many instance labels were skipped because they are not UTF-8 (a name that
        /// cannot be shown as it is would be resolved as another name).
        public let notUTF8: Int
    }

    /// The instance names of `type` in `zone`; PTRs that do not point one label below the
    /// type's name are ignored, and so are labels that are not valid UTF-8. At most
    /// `maximumInstances` are kept: the first in byte order.
    public func browse(_ type: ServiceType, in zone: DNSName) async throws(UnicastDNSSDError) -> Listing {
        let labels = try await instanceLabels(try type.name.appending(zone))
        var names: [String] = []
        var notUTF8 = 0
        for label in labels {
            guard let name = String(validating: label, as: UTF8.self) else { notUTF8 += 1; continue }
            names.append(name)
        }
        names.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let kept = Array(names.prefix(Self.maximumInstances))
        return Listing(names: kept.sorted(), cut: names.count - kept.count, notUTF8: notUTF8)
    }

    /// The distinct instance labels the PTRs of `service` point at (one label below it).
    private func instanceLabels(_ service: DNSName) async throws(UnicastDNSSDError) -> [[UInt8]] {
        var labels = Set<[UInt8]>()
        for record in try await server.query(service, .ptr) where record.name.sameName(as: service) {
            guard case .pointer(let target) = record.data, target.labels.count == service.labels.count + 1,
                  target.parent?.sameName(as: service) == true, let label = target.labels.first else { continue }
            labels.insert(label)
        }
        return Array(labels)
    }

    /// The order `resolve` keeps addresses in: IPv4 first, then by their bytes.
    static func addressOrder(_ one: IPAddress, _ other: IPAddress) -> Bool {
        switch (one, other) {
        case (.v4, .v6): true
        case (.v6, .v4): false
        case (.v4(let a), .v4(let b)), (.v6(let a), .v6(let b)): a.lexicographicallyPrecedes(b)
        }
    }

    /// The instance's host, port, TXT and addresses (at most `maximumAddresses`, in
    /// `addressOrder`), or nil when it has no SRV. With `cache`, the host's addresses are
    /// looked up only when no other resolve sharing the cache looked them up already.
    public func resolve(_ instanceName: String, type: ServiceType, in zone: DNSName,
                        cache: HostAddressCache? = nil) async throws(UnicastDNSSDError) -> ResolvedInstance? {
        let name = try type.name.appending(zone).prepending(Array(instanceName.utf8))
        guard let srv = try await server.query(name, .srv).first(where: { $0.name.sameName(as: name) }),
              case .service(_, _, let port, let target) = srv.data else { return nil }
        var txt: [[UInt8]] = []
        for record in try await server.query(name, .txt) where record.name.sameName(as: name) {
            if case .text(let strings) = record.data { txt = strings; break }
        }
        let server = server
        let lookUp = { @Sendable () async throws(UnicastDNSSDError) -> [IPAddress] in try await Self.addresses(of: target, from: server) }
        let addresses = if let cache { try await cache.addresses(of: target, lookUp: lookUp) } else { try await lookUp() }
        return ResolvedInstance(instanceName: instanceName, host: target, port: port, txt: txt, addresses: addresses)
    }

    /// All of `host`'s addresses, then the first `maximumAddresses` in a fixed order (IPv4
    /// before IPv6, then by bytes): never an arbitrary cut in the server's order.
    private static func addresses(of host: DNSName, from server: Server) async throws(UnicastDNSSDError) -> [IPAddress] {
        var found = Set<IPAddress>()
        for type in [RecordType.a, .aaaa] {
            for record in try await server.query(host, type) where record.name.sameName(as: host) {
                if case .address(let address) = record.data { found.insert(address) }
            }
        }
        return Array(found.sorted(by: addressOrder).prefix(maximumAddresses))
    }
}
