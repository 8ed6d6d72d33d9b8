/// An IPv4 or IPv6 address as raw network-order bytes, printed the standard way
/// (dotted quad; RFC 5952 for IPv6: lower case, longest run of zero groups as `::`).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable { case ipv4, ipv6 }

    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Returns nil unless `bytes` has 4 or 16 elements.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var family: Family { bytes.count == 4 ? .ipv4 : .ipv6 }

    /// fe80::/10: only meaningful together with the interface it was seen on.
    public var isLinkLocal: Bool {
        family == .ipv6 ? bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 : bytes[0] == 169 && bytes[1] == 254
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), as a dual-stack
    /// listener reports IPv4 peers.
    public var unmappedIPv4: IPAddress? {
        guard family == .ipv6, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// Why a service announced by someone else cannot be at this address, or nil when it can:
    /// an mDNS answer is anyone's word, and one that points at this machine's loopback, at
    /// nowhere (unspecified) or at a group (multicast, broadcast) would have a client talk to
    /// something that is not the service.
    public var unsuitableForAnnouncedService: String? {
        if let v4 = unmappedIPv4 { return v4.unsuitableForAnnouncedService }
        if family == .ipv4 {
            switch bytes[0] {
            case 0: return "an unspecified address"
            case 127: return "a loopback address"
            case 224...239: return "a multicast address"
            case 255 where bytes.allSatisfy({ $0 == 255 }): return "the broadcast address"
            default: return nil
            }
        }
        if bytes[0] == 0xFF { return "a multicast address" }
        if bytes[..<15].allSatisfy({ $0 == 0 }) {
            if bytes[15] == 0 { return "an unspecified address" }
            if bytes[15] == 1 { return "a loopback address" }
        }
        return nil
    }

    public var description: String {
        if family == .ipv4 { return bytes.map(String.init).joined(separator: ".") }
        if let v4 = unmappedIPv4 { return "::ffff:\(v4)" }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        // The longest run of two or more zero groups (the first one on a tie) becomes "::".
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            let start = index
            while index < 8 && groups[index] == 0 { index += 1 }
            if index - start > best.length { best = (start, index - start) }
        }
        func hex(_ slice: ArraySlice<UInt16>) -> String { slice.map { String($0, radix: 16) }.joined(separator: ":") }
        guard best.length >= 2 else { return hex(groups[...]) }
        return hex(groups[..<best.start]) + "::" + hex(groups[(best.start + best.length)...])
    }
}

extension String {
    /// This string with `"0"`s in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

/// An address and port to connect to or accept from; IPv6 link-local addresses carry the
/// interface they belong to (their scope).
public struct SocketEndpoint: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let port: UInt16
    /// The interface index for a link-local IPv6 address, 0 otherwise.
    public let scopeID: UInt32
    /// The interface name printed after `%`, when known.
    public let scopeName: String?

    public init(address: IPAddress, port: UInt16, scopeID: UInt32 = 0, scopeName: String? = nil) {
        self.address = address
        self.port = port
        self.scopeID = scopeID
        self.scopeName = scopeName
    }

    /// `10.77.0.1:4242`, `[fe80::1%veth0]:4242`; IPv4-mapped addresses print as IPv4.
    public var description: String {
        if let v4 = address.unmappedIPv4 { return "\(v4):\(port)" }
        guard address.family == .ipv6 else { return "\(address):\(port)" }
        let scope = scopeID == 0 ? "" : "%" + (scopeName ?? String(scopeID))
        return "[\(address)\(scope)]:\(port)"
    }

    /// What one host is counted as when limiting connections (pending connections, files):
    /// the IPv4 address, or the /64 of a routable IPv6 address (a host picks addresses inside
    /// its /64 at will, e.g. privacy addresses). A link-local address counts alone: every host
    /// of a link is in fe80::/64. Needs no lookup; room-code guesses count link-local peers
    /// more coarsely (`codeHostKey(_:)`).
    public var hostKey: String {
        if let v4 = address.unmappedIPv4 { return v4.description }
        guard address.family == .ipv6, !address.isLinkLocal else { return address.description }
        return (IPAddress(bytes: Array(address.bytes[..<8]) + Array(repeating: 0, count: 8)) ?? address).description + "/64"
    }

    /// What one host is counted as when it tries a room code. A link-local address says
    /// nothing about which machine sent it (any machine takes as many as it likes), so a
    /// link-local peer counts by what the neighbour table says (`NeighbourAttribution`), per
    /// interface: by the hardware address of an entry that stood unchanged through the
    /// connection (`fe80::/10%veth0 02:77:00:00:00:03`), in the interface's bucket for changed
    /// entries (`fe80::/10%veth0 unsettled`), or by the exact address when the table cannot be
    /// read (`fe80::1%veth0/128`). IPv4 link-local peers print as `169.254.0.0/16 …`. Other
    /// peers count as `hostKey`.
    public func codeHostKey(_ attribution: NeighbourAttribution) -> String {
        let v4 = address.unmappedIPv4 ?? (address.family == .ipv4 ? address : nil)
        guard v4?.isLinkLocal ?? address.isLinkLocal else { return hostKey }
        let link = v4 == nil ? "fe80::/10%" + (scopeName ?? String(scopeID)) : "169.254.0.0/16"
        switch attribution {
        case .hardware(let hardware):
            return link + " " + hardware.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: ":")
        case .unsettled:
            return link + " unsettled"
        case .exactAddress:
            return addressWithScope + (v4 == nil ? "/128" : "/32")
        }
    }

    /// The address alone, with its scope: `fe80::1%veth0` or `10.77.0.1`.
    public var addressWithScope: String {
        if let v4 = address.unmappedIPv4 { return v4.description }
        let scope = address.family == .ipv6 && scopeID != 0 ? "%" + (scopeName ?? String(scopeID)) : ""
        return "\(address)\(scope)"
    }
}
