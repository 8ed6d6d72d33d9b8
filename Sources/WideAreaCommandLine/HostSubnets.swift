import Glibc
import UnicastDNSSD

/// The subnets this host is on, from `getifaddrs`: every IPv4 subnet and every global IPv6
/// subnet of an interface that is up, loopback and link-local left out (no DNS server holds
/// a reverse zone for them). At most `maximumSubnets`, each once.
public enum HostSubnets {
    public static let maximumSubnets = 8

    public static func current() -> [IPSubnet] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var subnets: [IPSubnet] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = entry.pointee.ifa_addr, let mask = entry.pointee.ifa_netmask,
                  address.pointee.sa_family == mask.pointee.sa_family else { continue }
            let subnet: IPSubnet?
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) } }
                let maskBytes = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) } }
                // 169.254/16 is link-local.
                subnet = bytes[0] == 169 && bytes[1] == 254 ? nil : IPSubnet(address: .v4(bytes), mask: maskBytes)
            case AF_INET6:
                let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) } }
                let maskBytes = mask.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) } }
                // fe80::/10 is link-local.
                subnet = bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 ? nil : IPSubnet(address: .v6(bytes), mask: maskBytes)
            default:
                subnet = nil
            }
            guard let subnet, !subnets.contains(where: { $0.network == subnet.network && $0.prefixLength == subnet.prefixLength }) else { continue }
            subnets.append(subnet)
            if subnets.count == maximumSubnets { break }
        }
        return subnets
    }
}
