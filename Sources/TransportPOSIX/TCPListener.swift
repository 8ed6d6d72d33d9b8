@preconcurrency import Dispatch // sources are thread-safe; Linux's overlay lacks Sendable
import Glibc
import TransportCore

/// A TCP listening socket on all addresses, IPv6 and IPv4 at once when the host has IPv6
/// (an IPv6 socket with IPV6_V6ONLY off), IPv4 only otherwise. Port 0 lets the kernel choose
/// a free port; `port` tells which.
public final class TCPListener: @unchecked Sendable {
    /// The port the listener is bound to.
    public let port: UInt16
    /// Whether IPv6 peers can connect (false when the host has no IPv6).
    public let acceptsIPv6: Bool
    private let socket: Socket
    /// Created in `start`; `DispatchSource` is safe to cancel from any thread.
    private var source: (any DispatchSourceRead)?

    /// Binds and listens.
    /// - Throws: `TransportError`, e.g. `bind: Address already in use (errno 98)`.
    public init(port: UInt16 = 0, backlog: Int32 = 128) throws(TransportError) {
        var socket: Socket
        var acceptsIPv6 = true
        do {
            socket = try Socket.tcp(.ipv6)
            try socket.setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, "IPV6_V6ONLY")
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            try socket.bind(SocketEndpoint(address: IPAddress(bytes: Array(repeating: 0, count: 16))!, port: port))
        } catch where error.errno == EAFNOSUPPORT || error.errno == EADDRNOTAVAIL {
            socket = try Socket.tcp(.ipv4)
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            try socket.bind(SocketEndpoint(address: IPAddress(bytes: [0, 0, 0, 0])!, port: port))
            acceptsIPv6 = false
        }
        try socket.listen(backlog: backlog)
        self.socket = socket
        self.acceptsIPv6 = acceptsIPv6
        self.port = try socket.localEndpoint().port
    }

    /// Starts accepting. `handler` runs on `queue` for each new connection with the peer's
    /// address. Accept errors that concern one connection (e.g. it was reset already) are
    /// skipped; others (e.g. out of file descriptors) are passed to `onError` and accepting
    /// pauses briefly instead of spinning.
    public func start(queue: DispatchQueue, onError: @escaping @Sendable (TransportError) -> Void = { _ in },
                      handler: @escaping @Sendable (Socket, SocketEndpoint?) -> Void) {
        let source = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        source.setEventHandler { [socket] in
            while true {
                do throws(TransportError) {
                    guard let (client, peer) = try socket.accept() else { return }
                    handler(client, peer)
                } catch where [ECONNABORTED, EPROTO, EPERM].contains(error.errno) {
                    continue
                } catch {
                    onError(error)
                    source.suspend()
                    queue.asyncAfter(deadline: .now() + .milliseconds(100)) { source.resume() }
                    return
                }
            }
        }
        source.setCancelHandler { [socket] in socket.close() }
        self.source = source
        source.resume()
    }

    /// Stops accepting and closes the socket.
    public func cancel() {
        if let source { source.cancel() } else { socket.close() }
    }
}
