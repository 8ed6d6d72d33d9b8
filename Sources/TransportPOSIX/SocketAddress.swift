import Glibc
import TransportCore

extension SocketEndpoint {
    /// Reads an endpoint from a `sockaddr_in` or `sockaddr_in6`.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            let bytes = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            self.init(address: IPAddress(bytes: bytes)!, port: UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            let scope = sin6.sin6_scope_id
            self.init(address: IPAddress(bytes: bytes)!, port: UInt16(bigEndian: sin6.sin6_port),
                      scopeID: scope, scopeName: scope == 0 ? nil : interfaceName(scope))
        default:
            return nil
        }
    }

    /// Calls `body` with this endpoint as a `sockaddr` and its length.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(TransportError) -> Result) throws(TransportError) -> Result {
        var storage = sockaddr_storage()
        let length: Int
        switch address.family {
        case .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: address.bytes) }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: sin, as: sockaddr_in.self) }
            length = MemoryLayout<sockaddr_in>.size
        case .ipv6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            sin6.sin6_scope_id = scopeID
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: address.bytes) }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: sin6, as: sockaddr_in6.self) }
            length = MemoryLayout<sockaddr_in6>.size
        }
        return try withUnsafePointer(to: &storage) { (pointer) throws(TransportError) -> Result in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(TransportError) -> Result in
                try body(address, socklen_t(length))
            }
        }
    }
}

/// The name of interface `index`, or nil when there is none.
func interfaceName(_ index: UInt32) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard if_indextoname(index, &buffer) != nil else { return nil }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
