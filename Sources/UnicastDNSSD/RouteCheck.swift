import Glibc

extension IPAddress {
    /// The socket family of this address: `AF_INET` or `AF_INET6`.
    var socketFamily: Int32 { if case .v6 = self { AF_INET6 } else { AF_INET } }

    /// Connects `socket` (of `socketFamily`) to this address and `port`; connect(2)'s result,
    /// with `errno` set when it is -1.
    func connect(_ socket: Int32, port: UInt16) -> Int32 {
        switch self {
        case .v4(let bytes):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes.prefix(4)) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(let bytes):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes.prefix(16)) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// Whether this host has a route to the address: false only when the kernel says at once
    /// that none leads there (`ENETUNREACH`, `EHOSTUNREACH`), as in a network namespace whose
    /// only route is its own subnet. Connecting a UDP socket looks the route up and sends
    /// nothing. Any other outcome (a route, or a failure that says nothing about routes, such
    /// as no descriptor left) counts as a route, so that an exchange still runs and reports it.
    public var hasRoute: Bool {
        let socket = Glibc.socket(socketFamily, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return true }
        defer { close(socket) }
        let status = connect(socket, port: 53)
        let error = errno
        return status == 0 || (error != ENETUNREACH && error != EHOSTUNREACH)
    }
}
