import Glibc
import struct TransportCore.PublicKeyFingerprint
import UnicastDNSSD

/// The addresses other subnets can reach this host at: every IPv4 address and every global
/// IPv6 address of an interface that is up, loopback and link-local left out (a router does
/// not forward link-local).
enum HostAddresses {
    static func routable() -> [IPAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [IPAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0, let socketAddress = entry.pointee.ifa_addr else { continue }
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
                addresses.append(.v4(bytes))
            case AF_INET6:
                let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
                // fe80::/10 is link-local.
                if bytes.count == 16, !(bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) { addresses.append(.v6(bytes)) }
            default:
                continue
            }
        }
        return addresses
    }

    /// The label of the host name a room registers its addresses under in a unicast zone:
    /// the host's name and a tag of the room's key (`pc-1a2b3c4d`, the first 4 bytes of the
    /// fingerprint in hex). The publisher replaces the address records of that name, so the
    /// name must be its own: two machines with the same host name (default images) or two
    /// users on one machine get two names and never replace each other's addresses.
    static func hostLabel(for key: PublicKeyFingerprint) -> [UInt8]? {
        guard let base = hostLabel() else { return nil }
        let digits = Array("0123456789abcdef".utf8)
        let tag = key.bytes.prefix(4).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
        return Array(base.prefix(DNSName.maximumLabelLength - 1 - tag.count)) + [UInt8(ascii: "-")] + tag
    }

    /// This host's name as one DNS label (the part before the first dot), or nil when the
    /// kernel's host name is not a usable label.
    static func hostLabel() -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let label = Array(name.prefix { $0 != UInt8(ascii: ".") })
        let allowed = label.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == UInt8(ascii: "-") }
        return !label.isEmpty && label.count <= DNSName.maximumLabelLength && allowed ? label : nil
    }
}
