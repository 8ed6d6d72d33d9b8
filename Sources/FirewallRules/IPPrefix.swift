/// An IPv4 or IPv6 address with a prefix length, as firewall rules write them
/// (`224.0.0.251`, `10.0.0.0/8`, `ff02::fb`, `fe80::/64`).
public struct IPPrefix: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let address: [UInt8]
    /// 0...32 or 0...128.
    public let length: Int

    /// The mDNS group over IPv4, 224.0.0.251.
    public static let mdnsIPv4 = IPPrefix("224.0.0.251")!
    /// The mDNS group over IPv6, ff02::fb.
    public static let mdnsIPv6 = IPPrefix("ff02::fb")!

    /// Parses `address` or `address/length`; nil when it is neither (text from a ruleset is
    /// untrusted: anything else is refused, never trapped on).
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        guard let bytes = parts[0].contains(":") ? Self.parseIPv6(parts[0]) : Self.parseIPv4(parts[0]) else { return nil }
        let maximum = bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...maximum).contains(given) else { return nil }
            length = given
        }
        self.init(address: bytes, length: length)
    }

    /// Nil unless `address` has 4 or 16 bytes and `length` fits.
    public init?(address: [UInt8], length: Int) {
        guard address.count == 4 || address.count == 16, (0...address.count * 8).contains(length) else { return nil }
        self.address = address
        self.length = length
    }

    public var isIPv4: Bool { address.count == 4 }

    /// Whether every address of `other` is in this prefix (same family only).
    public func contains(_ other: IPPrefix) -> Bool {
        guard other.address.count == address.count, other.length >= length else { return false }
        for bit in 0..<length where (address[bit / 8] >> (7 - bit % 8)) & 1 != (other.address[bit / 8] >> (7 - bit % 8)) & 1 {
            return false
        }
        return true
    }

    /// Whether some address is in both.
    public func overlaps(_ other: IPPrefix) -> Bool { contains(other) || other.contains(self) }

    /// Whether the whole prefix is multicast (224.0.0.0/4, ff00::/8).
    public var isMulticast: Bool { (isIPv4 ? Self.multicastIPv4 : Self.multicastIPv6).contains(self) }
    private static let multicastIPv4 = IPPrefix(address: [224, 0, 0, 0], length: 4)!
    private static let multicastIPv6 = IPPrefix(address: [0xFF] + Array(repeating: 0, count: 15), length: 8)!

    public var description: String {
        let text = isIPv4 ? address.map(String.init).joined(separator: ".")
            : stride(from: 0, to: 16, by: 2).map { String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16) }.joined(separator: ":")
        return length == address.count * 8 ? text : "\(text)/\(length)"
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.utf8.allSatisfy({ (48...57).contains($0) }), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        let halves: [String]
        if let gap = text.firstRange(of: "::") {
            halves = [String(text[..<gap.lowerBound]), String(text[gap.upperBound...])]
            guard !halves[1].contains("::") else { return nil }
        } else {
            halves = [String(text)]
        }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    bytes += v4
                } else {
                    guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let value = UInt16(piece, radix: 16) else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
