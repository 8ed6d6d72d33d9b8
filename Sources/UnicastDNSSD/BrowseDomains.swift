/// The five kinds of domain a network recommends through DNS (RFC 6763 section 11): PTR
/// records at `<kind>._dns-sd._udp.<starting point>` whose targets are domains.
public enum BrowseDomainKind: String, Sendable, CaseIterable {
    /// `b`: domains offered for browsing.
    case browse = "b"
    /// `db`: the domain to browse by default.
    case defaultBrowse = "db"
    /// `lb`: "legacy browse" domains, which a browser given no domain browses as well as local.
    case legacyBrowse = "lb"
    /// `r`: domains offered for registering services.
    case registration = "r"
    /// `dr`: the domain to register in by default.
    case defaultRegistration = "dr"

    /// The name used in output: `browse`, `default-browse`, `legacy-browse`, `register`,
    /// `default-register`.
    public var name: String {
        switch self {
        case .browse: "browse"
        case .defaultBrowse: "default-browse"
        case .legacyBrowse: "legacy-browse"
        case .registration: "register"
        case .defaultRegistration: "default-register"
        }
    }

    /// The name asked: `<kind>._dns-sd._udp.<startingPoint>`.
    /// - Throws: `.invalidName` when that name is longer than DNS allows.
    public func queryName(under startingPoint: DNSName) throws(UnicastDNSSDError) -> DNSName {
        try DNSName(labels: [Array(rawValue.utf8), Array("_dns-sd".utf8), Array("_udp".utf8)] + startingPoint.labels)
    }
}

/// One domain the network recommends.
public struct BrowseDomain: Sendable, Hashable {
    public let kind: BrowseDomainKind
    /// The recommended domain (a PTR target: print it as `description`, which escapes it).
    public let domain: DNSName
    /// Where it was found: the search domains and reverse-mapping names whose PTRs named it,
    /// in the order they were asked.
    public internal(set) var startingPoints: [DNSName]

    /// The names asked that answered with this domain (`<kind>._dns-sd._udp.<starting point>`).
    public var queries: [DNSName] { startingPoints.compactMap { try? kind.queryName(under: $0) } }

    public init(kind: BrowseDomainKind, domain: DNSName, startingPoints: [DNSName]) {
        self.kind = kind
        self.domain = domain
        self.startingPoints = startingPoints
    }
}

/// An IPv4 or IPv6 subnet of this host: an address and its prefix length.
public struct IPSubnet: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    /// The prefix length, at most 32 (IPv4) or 128 (IPv6).
    public let prefixLength: Int

    /// nil when the prefix length does not fit the address's family or the address has the
    /// wrong number of bytes.
    public init?(address: IPAddress, prefixLength: Int) {
        let bits = switch address { case .v4(let bytes): bytes.count == 4 ? 32 : -1; case .v6(let bytes): bytes.count == 16 ? 128 : -1 }
        guard prefixLength >= 0, prefixLength <= bits else { return nil }
        self.address = address
        self.prefixLength = prefixLength
    }

    /// The subnet of `address` with netmask `mask` (as `getifaddrs` gives it): the prefix is
    /// the mask's leading one bits. nil when the mask's length is not the address's.
    public init?(address: IPAddress, mask: [UInt8]) {
        let length = switch address { case .v4(let bytes), .v6(let bytes): bytes.count }
        guard mask.count == length else { return nil }
        var prefix = 0
        for byte in mask {
            prefix += (~byte).leadingZeroBitCount
            if byte != 0xFF { break }
        }
        self.init(address: address, prefixLength: prefix)
    }

    /// The network's address: the host bits cleared.
    public var network: [UInt8] {
        let bytes: [UInt8] = switch address { case .v4(let bytes), .v6(let bytes): bytes }
        return bytes.enumerated().map { index, byte in
            let kept = min(max(prefixLength - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }

    public var description: String {
        let network = switch address { case .v4: IPAddress.v4(self.network); case .v6: IPAddress.v6(self.network) }
        return "\(network)/\(prefixLength)"
    }

    /// The subnet's reverse-mapping name (RFC 6763 section 11: the address ANDed with the
    /// mask, written backwards): `0.2.0.192.in-addr.arpa.` for 192.0.2.0/24, the 32 nibbles
    /// under `ip6.arpa.` for IPv6.
    /// nil only if the name broke DNS's limits, which 6 or 34 short labels never do.
    public var reverseMappingName: DNSName? {
        let network = self.network
        let labels: [[UInt8]]
        switch address {
        case .v4:
            labels = network.reversed().map { Array(String($0).utf8) } + [Array("in-addr".utf8), Array("arpa".utf8)]
        case .v6:
            let digits = Array("0123456789abcdef".utf8)
            labels = network.reversed().flatMap { [[digits[Int($0 & 0x0F)]], [digits[Int($0 >> 4)]]] } + [Array("ip6".utf8), Array("arpa".utf8)]
        }
        return try? DNSName(labels: labels)
    }
}

/// What a domain enumeration found, and where it could not look.
public struct DomainEnumeration: Sendable {
    /// The most starting points asked (search domains, then subnets).
    public static let maximumStartingPoints = 8
    /// The most domains taken from one answer (the first in the answer's order).
    public static let maximumDomainsPerAnswer = 16
    /// The most domains kept in all.
    public static let maximumDomains = 64

    /// The domains found, each (kind, domain) once, in the order of the starting points that
    /// named them first.
    public var domains: [BrowseDomain] = []
    /// Domains left out by the bounds above.
    public var cut = 0
    /// Starting points the server did not answer for: the name asked and why.
    public var failures: [(startingPoint: DNSName, error: UnicastDNSSDError)] = []

    public init() {}

    /// The starting points RFC 6763 section 11 names, each once (case aside), at most
    /// `maximumStartingPoints`: the search domains, then the subnets' reverse-mapping names.
    public static func startingPoints(searchDomains: [DNSName], subnets: [IPSubnet]) -> [DNSName] {
        var points: [DNSName] = []
        for name in searchDomains + subnets.compactMap(\.reverseMappingName) where !name.labels.isEmpty && !points.contains(where: { $0.sameName(as: name) }) {
            points.append(name)
            if points.count == maximumStartingPoints { break }
        }
        return points
    }

    /// Adds what one answer said, within the bounds.
    mutating func add(_ found: [DNSName], kind: BrowseDomainKind, startingPoint: DNSName) {
        var taken = 0
        for domain in found {
            if let index = domains.firstIndex(where: { $0.kind == kind && $0.domain.sameName(as: domain) }) {
                if !domains[index].startingPoints.contains(where: { $0.sameName(as: startingPoint) }) { domains[index].startingPoints.append(startingPoint) }
                continue
            }
            guard taken < Self.maximumDomainsPerAnswer, domains.count < Self.maximumDomains else {
                cut += 1
                continue
            }
            domains.append(BrowseDomain(kind: kind, domain: domain, startingPoints: [startingPoint]))
            taken += 1
        }
    }
}

extension UnicastServiceDirectory {
    /// The domains of `kind` the server recommends under `startingPoint`: the targets of the
    /// PTR records at `<kind>._dns-sd._udp.<startingPoint>`, in the answer's order.
    /// - Throws: the server's error; `.noSuchZone` when it serves no zone that holds the name.
    public func domains(_ kind: BrowseDomainKind, under startingPoint: DNSName) async throws(UnicastDNSSDError) -> [DNSName] {
        let name = try kind.queryName(under: startingPoint)
        return try await server.query(name, .ptr).compactMap { record in
            guard record.name.sameName(as: name), case .pointer(let target) = record.data, !target.labels.isEmpty else { return nil }
            return target
        }
    }

    /// Asks every starting point for every kind in `kinds`: the starting points at once,
    /// the kinds of one starting point in turn. A starting point the server serves no zone
    /// for recommends nothing; one whose server cannot be reached or does not answer in time
    /// is given up (its other kinds are not asked) and listed in `failures`.
    public func enumerateDomains(_ kinds: [BrowseDomainKind], startingPoints: [DNSName]) async -> DomainEnumeration {
        let points = Array(startingPoints.prefix(DomainEnumeration.maximumStartingPoints))
        let answers = await withTaskGroup(of: (Int, [(BrowseDomainKind, [DNSName])], UnicastDNSSDError?).self) { group in
            for (index, point) in points.enumerated() {
                group.addTask {
                    var found: [(BrowseDomainKind, [DNSName])] = []
                    for kind in kinds {
                        do throws(UnicastDNSSDError) {
                            found.append((kind, try await domains(kind, under: point)))
                        } catch where error.code == .noSuchZone {
                            break
                        } catch {
                            return (index, found, error)
                        }
                    }
                    return (index, found, nil)
                }
            }
            var answers: [(Int, [(BrowseDomainKind, [DNSName])], UnicastDNSSDError?)] = []
            for await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }
        }
        var enumeration = DomainEnumeration()
        for (index, found, error) in answers {
            for (kind, domains) in found { enumeration.add(domains, kind: kind, startingPoint: points[index]) }
            if let error, error.code != .cancelled { enumeration.failures.append((points[index], error)) }
        }
        return enumeration
    }
}
