import Glibc
import TransportCore

/// The interface a connection came in on, from its local address: an IPv4 socket does not
/// carry the peer's interface (no scope ID), but the address it was accepted on is this
/// host's, on one interface.
enum LocalInterface {
    /// The index of the one interface that holds `socket`'s local IPv4 address; nil when the
    /// address cannot be read, is not IPv4, or is held by no interface or by several.
    static func index(of socket: Socket) -> UInt32? {
        guard let local = try? socket.localEndpoint(),
              let v4 = local.address.unmappedIPv4 ?? (local.address.family == .ipv4 ? local.address : nil) else { return nil }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var found = Set<UInt32>()
        var next = list
        while let current = next {
            next = current.pointee.ifa_next
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  let name = current.pointee.ifa_name else { continue }
            let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
            }
            guard bytes == v4.bytes else { continue }
            let index = if_nametoindex(name)
            if index != 0 { found.insert(index) }
        }
        return found.count == 1 ? found.first : nil
    }
}
