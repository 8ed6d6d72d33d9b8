/// One condition of a rule, in the terms `IncomingPacket` knows. Each holds, does not hold,
/// or cannot be told for the packet (`Truth.unknown`).
enum Condition: Sendable, Equatable {
    /// IPv4 or IPv6 only (nftables `ip ...` / `ip6 ...` matches in an inet table, `meta nfproto`).
    case family(IncomingPacket.Family, negated: Bool)
    /// The IP protocol number is one of these.
    case transport(Set<Int>, negated: Bool)
    /// The destination port is in one of these ranges (tcp, udp, th dport).
    case destinationPort([ClosedRange<Int>], negated: Bool)
    /// The destination address is in one of these prefixes.
    case destinationAddress([IPPrefix], negated: Bool)
    /// The input interface's name is one of these (a trailing `+` or `*` matches any suffix).
    case inputInterface([String], negated: Bool)
    /// The link-layer packet type: host, multicast, broadcast, other.
    case packetType(Set<String>, negated: Bool)
    /// The connection tracking state (new, established, related, invalid, untracked).
    case connectionState(Set<String>, negated: Bool)
    /// A connection tracking status bit (dnat, snat, ...): our packet has none.
    case connectionStatus(Set<String>, negated: Bool)
    /// Something this module does not interpret, as the rule writes it.
    case unknown(String)

    /// Three-valued truth.
    enum Truth: Sendable, Equatable {
        case yes, no, unknown
    }

    /// Whether the condition holds for `packet`.
    func evaluate(_ packet: IncomingPacket) -> Truth {
        switch self {
        case .family(let family, let negated):
            return Self.truth(packet.family == family, negated)
        case .transport(let numbers, let negated):
            return Self.truth(numbers.contains(packet.transport.number), negated)
        case .destinationPort(let ranges, let negated):
            return Self.truth(ranges.contains { $0.contains(Int(packet.destinationPort)) }, negated)
        case .destinationAddress(let prefixes, let negated):
            let sameFamily = prefixes.filter { $0.isIPv4 == (packet.family == .ipv4) }
            if let group = packet.multicastGroup {
                return Self.truth(sameFamily.contains { $0.contains(group) }, negated)
            }
            // One of this host's own addresses: not in a multicast prefix, maybe in another.
            if sameFamily.allSatisfy(\.isMulticast) { return Self.truth(false, negated) }
            return .unknown
        case .inputInterface(let names, let negated):
            if let name = packet.inputInterface {
                return Self.truth(names.contains { Self.interface(name, matches: $0) }, negated)
            }
            // From another host: never the loopback; any other name cannot be told.
            if names.allSatisfy({ $0 == "lo" }) { return Self.truth(false, negated) }
            return .unknown
        case .packetType(let types, let negated):
            return Self.truth(types.contains(packet.multicastGroup == nil ? "host" : "multicast"), negated)
        case .connectionState(let states, let negated):
            return Self.truth(states.contains("new"), negated)
        case .connectionStatus(_, let negated):
            return Self.truth(false, negated)
        case .unknown:
            return .unknown
        }
    }

    private static func truth(_ value: Bool, _ negated: Bool) -> Truth { value != negated ? .yes : .no }

    /// iptables' `eth+` and nftables' `"eth*"` match any name that starts with `eth`.
    private static func interface(_ name: String, matches pattern: String) -> Bool {
        if let last = pattern.last, last == "+" || last == "*" { return name.hasPrefix(pattern.dropLast()) }
        return name == pattern
    }
}
