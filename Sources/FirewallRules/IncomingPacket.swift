/// The packet a check is about: what arrives at this host from another host of the LAN.
///
/// Only what the rules are asked about is modelled; everything else about the packet (its
/// source address and port, marks, routing) is unknown, and a rule that matches on it can only
/// "maybe" apply.
public struct IncomingPacket: Sendable, Hashable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public enum Family: String, Sendable, Hashable { case ipv4, ipv6 }

    /// The transport protocol.
    public enum Transport: String, Sendable, Hashable {
        case tcp, udp
        /// The IP protocol number (6, 17).
        public var number: Int { self == .tcp ? 6 : 17 }
    }

    public var family: Family
    public var transport: Transport
    public var destinationPort: UInt16
    /// The multicast group it is sent to, or nil for a packet sent to one of this host's own
    /// (unicast) addresses, which the rules are not told.
    public var multicastGroup: IPPrefix?
    /// The interface it arrives on, or nil when unknown (never the loopback: it comes from
    /// another host). A check that knows which interface the LAN is on can say so.
    public var inputInterface: String?

    public init(family: Family, transport: Transport, destinationPort: UInt16, multicastGroup: IPPrefix? = nil, inputInterface: String? = nil) {
        self.family = family
        self.transport = transport
        self.destinationPort = destinationPort
        self.multicastGroup = multicastGroup
        self.inputInterface = inputInterface
    }

    /// An mDNS query or answer: UDP to port 5353 of 224.0.0.251 (IPv4) or ff02::fb (IPv6).
    public static func mdns(_ family: Family, inputInterface: String? = nil) -> IncomingPacket {
        IncomingPacket(family: family, transport: .udp, destinationPort: 5353,
                       multicastGroup: family == .ipv4 ? .mdnsIPv4 : .mdnsIPv6, inputInterface: inputInterface)
    }

    /// The first packet of a TCP connection to `port` on one of this host's addresses.
    public static func tcp(port: UInt16, _ family: Family, inputInterface: String? = nil) -> IncomingPacket {
        IncomingPacket(family: family, transport: .tcp, destinationPort: port, inputInterface: inputInterface)
    }

    /// E.g. `UDP to 224.0.0.251 port 5353` or `TCP over IPv6 to port 4242`.
    public var description: String {
        let to = multicastGroup.map { "to \($0.address) port" } ?? "over \(family == .ipv4 ? "IPv4" : "IPv6") to port"
        return "\(transport.rawValue.uppercased()) \(to) \(destinationPort)"
    }
}

/// The kind of traffic a check is about, over both IPv4 and IPv6.
public enum Traffic: Sendable, Hashable, CustomStringConvertible {
    /// mDNS: UDP to port 5353 of 224.0.0.251 and ff02::fb.
    case mdns
    /// Incoming TCP connections to this port (e.g. the publisher's).
    case tcp(port: UInt16)

    /// The packets that stand for this traffic, IPv4 first.
    public func packets(inputInterface: String? = nil) -> [IncomingPacket] {
        switch self {
        case .mdns: [.mdns(.ipv4, inputInterface: inputInterface), .mdns(.ipv6, inputInterface: inputInterface)]
        case .tcp(let port): [.tcp(port: port, .ipv4, inputInterface: inputInterface), .tcp(port: port, .ipv6, inputInterface: inputInterface)]
        }
    }

    /// `mDNS (UDP port 5353)` or `incoming TCP to port 4242`.
    public var description: String {
        switch self {
        case .mdns: "mDNS (UDP port 5353)"
        case .tcp(let port): "incoming TCP to port \(port)"
        }
    }
}
