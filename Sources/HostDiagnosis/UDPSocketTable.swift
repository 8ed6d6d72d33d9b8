import TransportCore

/// One line of /proc/net/udp or /proc/net/udp6: a bound UDP socket.
public struct UDPSocketEntry: Sendable, Hashable {
    public let address: IPAddress
    public let port: UInt16
    /// The user that opened it.
    public let uid: UInt32
    /// The socket's inode: `/proc/PID/fd/N` links to `socket:[inode]` in the process that owns it.
    public let inode: UInt64

    /// Parses a line such as
    /// `  0: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000   104  0 20473 2 ...`;
    /// nil for the header and for anything malformed.
    public init?(line: Substring) {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 10, fields[0].hasSuffix(":") else { return nil }
        let local = fields[1].split(separator: ":")
        guard local.count == 2, let port = UInt16(local[1], radix: 16), let uid = UInt32(fields[7]), let inode = UInt64(fields[9]),
              let address = Self.address(hex: local[0]) else { return nil }
        self.address = address
        self.port = port
        self.uid = uid
        self.inode = inode
    }

    /// The kernel prints the address as 32-bit words in host (little-endian) order.
    static func address(hex: Substring) -> IPAddress? {
        guard hex.count == 8 || hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let end = hex.index(index, offsetBy: 8)
            guard let word = UInt32(hex[index..<end], radix: 16) else { return nil }
            bytes += [UInt8(word & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word >> 16 & 0xFF), UInt8(word >> 24)]
            index = end
        }
        return IPAddress(bytes: bytes)
    }

    /// The sockets bound to `port` in the text of /proc/net/udp or udp6 (bounded: see `ConfigText`).
    public static func sockets(boundTo port: UInt16, in text: String) -> [UDPSocketEntry] {
        ConfigText.lines(text).compactMap { UDPSocketEntry(line: $0.text) }.filter { $0.port == port }
    }
}

/// `/proc/PID/status`, as far as svc-doctor needs it.
public enum ProcessStatus {
    /// The real user id from the `Uid:` line (`Uid:\t104\t104\t104\t104`), or nil.
    public static func realUID(in text: String) -> UInt32? {
        for (_, line) in ConfigText.lines(text) where line.hasPrefix("Uid:") {
            return line.dropFirst(4).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { UInt32($0) }
        }
        return nil
    }
}
