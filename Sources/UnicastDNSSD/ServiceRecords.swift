import Glibc

/// An IPv4 or IPv6 address as its bytes (4 or 16).
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// Parses dotted IPv4 or textual IPv6 (no zone index); nil for anything else.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
        } else {
            return nil
        }
    }

    /// The address in the usual text form.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let (family, bytes): (Int32, [UInt8]) = switch self {
        case .v4(let bytes): (AF_INET, bytes)
        case .v6(let bytes): (AF_INET6, bytes)
        }
        guard bytes.count == (family == AF_INET ? 4 : 16),
              bytes.withUnsafeBytes({ inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The data of one resource record, by type.
public enum RecordData: Sendable, Hashable {
    /// PTR: the service type's name points at an instance.
    case pointer(DNSName)
    /// SRV: where the instance listens.
    case service(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName)
    /// TXT: character strings of at most 255 bytes each.
    case text([[UInt8]])
    /// A or AAAA.
    case address(IPAddress)

    /// The record's type.
    public var type: RecordType {
        switch self {
        case .pointer: .ptr
        case .service: .srv
        case .text: .txt
        case .address(.v4): .a
        case .address(.v6): .aaaa
        }
    }
}

/// One resource record: owner name, TTL and data (class IN).
public struct ResourceRecord: Sendable, Hashable {
    public let name: DNSName
    public let ttl: UInt32
    public let data: RecordData

    public init(name: DNSName, ttl: UInt32, data: RecordData) {
        self.name = name
        self.ttl = ttl
        self.data = data
    }
}

/// A DNS-SD service type such as `_p2pipp._tcp`: an underscore name of 1 to 15 letters,
/// digits and hyphens (RFC 6335), then `_tcp` or `_udp`.
public struct ServiceType: Sendable, Hashable, CustomStringConvertible {
    public let name: DNSName

    /// - Throws: `.invalidName` with the rule that is broken.
    public init(_ text: String) throws(UnicastDNSSDError) {
        let parts = text.hasSuffix(".") ? String(text.dropLast()) : text
        let labels = parts.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count == 2, ["_tcp", "_udp"].contains(labels[1].lowercased()),
              labels[0].hasPrefix("_"), (2...16).contains(labels[0].utf8.count),
              labels[0].dropFirst().utf8.allSatisfy({ $0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber || $0 == UInt8(ascii: "-")) })
        else {
            throw UnicastDNSSDError(.invalidName, "'\(text)' is not a service type; write it as _name._tcp or _name._udp (name: 1 to 15 letters, digits or '-')")
        }
        name = try DNSName(labels: labels.map { Array($0.utf8) })
    }

    public var description: String { name.description }
}

/// What a publisher puts in a unicast zone for one service instance (RFC 6763): the type's
/// PTR to the instance, the instance's SRV and TXT, and the host's A/AAAA records.
public struct ServiceInstance: Sendable, Hashable {
    /// The instance name as people read it (one DNS label, at most 63 bytes of UTF-8).
    public let instanceName: String
    public let type: ServiceType
    public let zone: DNSName
    /// The host's full name in the zone, the SRV target (e.g. `myhost.lab.test.`).
    public let host: DNSName
    public let port: UInt16
    /// TXT character strings, each at most 255 bytes (empty: one empty string is published).
    public let txt: [[UInt8]]
    public let addresses: [IPAddress]

    /// - Throws: `.invalidName` when a name breaks DNS limits or the host is outside the zone,
    ///   `.tooLarge` when a TXT string passes 255 bytes.
    public init(instanceName: String, type: ServiceType, zone: DNSName, host: DNSName, port: UInt16,
                txt: [[UInt8]], addresses: [IPAddress]) throws(UnicastDNSSDError) {
        guard host.isWithin(zone), host.labels.count > zone.labels.count else {
            throw UnicastDNSSDError(.invalidName, "the host name \(host) is not inside the zone \(zone); the server only takes names in its zone")
        }
        if let long = txt.first(where: { $0.count > 255 }) {
            throw UnicastDNSSDError(.tooLarge, "a TXT item is \(long.count) bytes, more than 255; shorten it")
        }
        self.instanceName = instanceName
        self.type = type
        self.zone = zone
        self.host = host
        self.port = port
        self.txt = txt
        self.addresses = addresses
        _ = try instanceDNSName()
    }

    /// `_type._tcp.zone.`
    public func serviceDNSName() throws(UnicastDNSSDError) -> DNSName { try type.name.appending(zone) }

    /// `Instance Name._type._tcp.zone.`
    public func instanceDNSName() throws(UnicastDNSSDError) -> DNSName {
        try serviceDNSName().prepending(Array(instanceName.utf8))
    }

    /// The same instance under another name (after a conflict).
    public func renamed(_ name: String) throws(UnicastDNSSDError) -> ServiceInstance {
        try ServiceInstance(instanceName: name, type: type, zone: zone, host: host, port: port, txt: txt, addresses: addresses)
    }

    /// The same instance on other addresses (the host's changed).
    public func moved(to addresses: [IPAddress]) throws(UnicastDNSSDError) -> ServiceInstance {
        try ServiceInstance(instanceName: instanceName, type: type, zone: zone, host: host, port: port, txt: txt, addresses: addresses)
    }

    /// The SRV record alone: what a refresh checks is still ours.
    public func serviceRecord(ttl: UInt32) throws(UnicastDNSSDError) -> ResourceRecord {
        ResourceRecord(name: try instanceDNSName(), ttl: ttl, data: .service(priority: 0, weight: 0, port: port, target: host))
    }

    /// The TXT item `key=...` (the publisher's key fingerprint) that proves whose the
    /// registration is, when the TXT has one.
    public var keyItem: [UInt8]? { txt.first { $0.starts(with: Array("key=".utf8)) } }

    /// Every record of the registration, with `ttl`: PTR, SRV, TXT, then one A or AAAA per
    /// address (duplicates dropped).
    public func records(ttl: UInt32) throws(UnicastDNSSDError) -> [ResourceRecord] {
        let instance = try instanceDNSName()
        var records = [
            ResourceRecord(name: try serviceDNSName(), ttl: ttl, data: .pointer(instance)),
            try serviceRecord(ttl: ttl),
            ResourceRecord(name: instance, ttl: ttl, data: .text(txt.isEmpty ? [[]] : txt)),
        ]
        var seen = Set<IPAddress>()
        for address in addresses where seen.insert(address).inserted {
            records.append(ResourceRecord(name: host, ttl: ttl, data: .address(address)))
        }
        return records
    }
}
