import Glibc
import Synchronization
import TransportCore

/// Owns one socket file descriptor: created non-blocking and close-on-exec, closed exactly
/// once by `close()` or when the object goes away.
///
/// - Important: the methods are not synchronised; use a socket from one queue at a time
///   (its `Connection` or `TCPListener` queue). Only `close()` is safe from anywhere.
public final class Socket: @unchecked Sendable {
    public let fd: Int32
    private let isClosed = Mutex(false)

    init(adopting fd: Int32) { self.fd = fd }

    /// A new non-blocking TCP socket of the given family.
    static func tcp(_ family: IPAddress.Family) throws(TransportError) -> Socket {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return Socket(adopting: try syscall("socket") { Glibc.socket(domain, kind, 0) })
    }

    deinit { close() }

    /// Closes the descriptor; later calls do nothing.
    public func close() {
        let wasClosed = isClosed.withLock { closed in
            defer { closed = true }
            return closed
        }
        if !wasClosed { _ = Glibc.close(fd) }
    }

    func setOption(_ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws(TransportError) {
        var value = value
        _ = try syscall("setsockopt(\(label))") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// SO_BINDTODEVICE: the socket sends and receives through this interface only, whatever
    /// the routing table says (Linux 5.7 and later allow it without privileges on a socket not
    /// yet bound to an interface).
    /// - Throws: `TransportError` naming the interface, with what to do when not permitted.
    func bind(toInterface name: String) throws(TransportError) {
        let bytes = Array(name.utf8)
        do {
            _ = try syscall("setsockopt(SO_BINDTODEVICE)") {
                setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, bytes, socklen_t(bytes.count))
            }
        } catch where error.errno == EPERM {
            throw TransportError("setsockopt(SO_BINDTODEVICE)", message: "not permitted to keep the connection on interface "
                                 + "\(name): this needs Linux 5.7 or later, or root; leave out --interface to connect over any interface")
        }
    }

    func bind(_ endpoint: SocketEndpoint) throws(TransportError) {
        try endpoint.withSocketAddress { (address, length) throws(TransportError) in
            _ = try syscall("bind") { Glibc.bind(fd, address, length) }
        }
    }

    func listen(backlog: Int32) throws(TransportError) {
        _ = try syscall("listen") { Glibc.listen(fd, backlog) }
    }

    /// Accepts one pending connection, or nil when none is waiting.
    func accept() throws(TransportError) -> (Socket, SocketEndpoint?)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try nonBlockingSyscall("accept") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(Glibc.accept(fd, $0, &length)) }
            }
        }
        guard case .processed(let newFD) = result else { return nil }
        let client = Socket(adopting: Int32(newFD))
        // accept4 is not visible from Swift's Glibc module; set the flags the portable way.
        _ = try syscall("fcntl(F_SETFD)") { fcntl(client.fd, F_SETFD, FD_CLOEXEC) }
        let flags = try syscall("fcntl(F_GETFL)") { fcntl(client.fd, F_GETFL) }
        _ = try syscall("fcntl(F_SETFL)") { fcntl(client.fd, F_SETFL, flags | O_NONBLOCK) }
        return (client, SocketEndpoint(storage))
    }

    /// Starts a non-blocking connect: `.processed` when already connected, `.wouldBlock`
    /// while in progress (wait for writability, then check `pendingError()`).
    func connect(to endpoint: SocketEndpoint) throws(TransportError) -> IOResult {
        try endpoint.withSocketAddress { (address, length) throws(TransportError) in
            try nonBlockingSyscall("connect") { Int(Glibc.connect(fd, address, length)) }
        }
    }

    /// SO_ERROR: the outcome of a non-blocking connect.
    func pendingError() throws(TransportError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try syscall("getsockopt(SO_ERROR)") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }
        return value
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransportError) -> IOResult {
        try nonBlockingSyscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) -> IOResult {
        try nonBlockingSyscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// SIOCOUTQ: bytes in the send queue the peer's TCP has not acknowledged yet (sent or
    /// not); nil when the kernel does not say.
    func unacknowledgedByteCount() -> Int? {
        var value: Int32 = 0
        guard ioctl(fd, UInt(TIOCOUTQ), &value) == 0, value >= 0 else { return nil }
        return Int(value)
    }

    func shutdownWrite() throws(TransportError) {
        _ = try syscall("shutdown") { Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// The address this socket is bound to (e.g. to learn the port the kernel chose).
    func localEndpoint() throws(TransportError) -> SocketEndpoint {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try syscall("getsockname") {
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        }
        guard let endpoint = SocketEndpoint(storage) else { throw TransportError("getsockname", message: "not an IP socket") }
        return endpoint
    }
}
