import Glibc

extension IPAddress {
    /// Whether this host has a route to the address: false only when the kernel says at once
    /// that none leads there (`ENETUNREACH`, `EHOSTUNREACH`), as in a network namespace whose
    /// only route is its own subnet. Connecting a UDP socket looks the route up and sends
    /// nothing. Any other outcome (a route, or a failure that says nothing about routes, such
    /// as no descriptor left) counts as a route, so that an exchange still runs and reports it.
    public var hasRoute: Bool {
        let family = if case .v6 = self { AF_INET6 } else { AF_INET }
        let socket = Glibc.socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return true }
        defer { close(socket) }
        let status: Int32
        switch self {
        case .v4(let bytes):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(53).bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes.prefix(4)) }
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(let bytes):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(53).bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes.prefix(16)) }
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        let error = errno
        return status == 0 || (error != ENETUNREACH && error != EHOSTUNREACH)
    }
}
