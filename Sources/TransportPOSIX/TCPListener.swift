import Glibc
import Synchronization
import TransportCore

/// A TCP listening socket on all addresses, IPv6 and IPv4 at once when the host has IPv6
/// (an IPv6 socket with IPV6_V6ONLY off), IPv4 only otherwise. Port 0 lets the kernel choose
/// a free port; `port` tells which.
///
/// - Important: `start` and `cancel` may be called from any thread; accepting happens on the
///   loop given to `start`.
public final class TCPListener: Sendable {
    /// The port the listener is bound to.
    public let port: UInt16
    /// Whether IPv6 peers can connect (false when the host has no IPv6).
    public let acceptsIPv6: Bool
    private let socket: Socket
    /// Once started: the loop accepting, and how to stop the acceptor there.
    private let started = Mutex<(loop: EventLoop, stop: LoopWork)?>(nil)

    /// Binds and listens. With `sendBuffer`, each accepted connection's kernel send buffer is
    /// that size (SO_SNDBUF: Linux doubles it for its bookkeeping and no longer grows it), so
    /// peers that read slowly cannot make the kernel hold megabytes for each of them.
    /// - Throws: `TransportError`, e.g. `bind: Address already in use (errno 98)`.
    public init(port: UInt16 = 0, backlog: Int32 = 128, sendBuffer: Int32? = nil) throws(TransportError) {
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
        // Accepted sockets inherit it from the listening one.
        if let sendBuffer { try socket.setOption(SOL_SOCKET, SO_SNDBUF, sendBuffer, "SO_SNDBUF") }
        try socket.listen(backlog: backlog)
        self.socket = socket
        self.acceptsIPv6 = acceptsIPv6
        self.port = try socket.localEndpoint().port
    }

    /// Starts accepting. `handler` runs on `loop` for each new connection with the peer's
    /// address. Accept errors that concern one connection (e.g. it was reset already) are
    /// skipped; others (e.g. out of file descriptors) are passed to `onError` and accepting
    /// pauses briefly instead of spinning. Both closures run on `loop` only, so they may use
    /// what is bound to it.
    public func start(on loop: EventLoop, onError: @escaping (TransportError) -> Void = { _ in },
                      handler: @escaping (Socket, SocketEndpoint?) -> Void) {
        let acceptor = Acceptor(socket: socket, loop: loop, onError: onError, handler: handler)
        started.withLock { $0 = (loop, LoopWork { acceptor.stop() }) }
        loop.execute { acceptor.start() }
    }

    /// Stops accepting and closes the socket (on the loop, when started).
    public func cancel() {
        guard let (loop, stop) = started.withLock({ $0 }) else { return socket.close() }
        loop.execute { stop.run() }
    }
}

/// Accepts on the loop while the listening socket is readable.
private final class Acceptor: EventLoopSelectable {
    private let socket: Socket
    private let loop: EventLoop
    private let onError: (TransportError) -> Void
    private let handler: (Socket, SocketEndpoint?) -> Void
    private var registration: EventLoopRegistration?
    private var isStopped = false

    init(socket: Socket, loop: EventLoop, onError: @escaping (TransportError) -> Void,
         handler: @escaping (Socket, SocketEndpoint?) -> Void) {
        self.socket = socket
        self.loop = loop
        self.onError = onError
        self.handler = handler
    }

    func start() {
        loop.assertOnExecutor()
        do throws(TransportError) {
            guard !isStopped else { return }
            registration = try loop.register(socket.fd, interest: .read, owner: self)
        } catch {
            onError(error)
        }
    }

    /// Connections accepted at most each time the socket is reported readable; the rest wait
    /// in the kernel's queue until the loop has served the other ready descriptors (the
    /// selector is level-triggered, so it reports the socket again), as swift-nio's
    /// `maxMessagesPerRead` does. Accepting all at once let a loop that had fallen behind hold
    /// hundreds of connections whose HELLO it had not yet read: a room counted them as not
    /// having said HELLO and refused one host's members (at load 11, 2 of a thousand joining).
    static let acceptsPerReadiness = 16

    func ready(_ readiness: EventLoop.Readiness) {
        var accepted = 0
        while !isStopped, accepted < Self.acceptsPerReadiness {
            accepted += 1
            do throws(TransportError) {
                guard let (client, peer) = try socket.accept() else { return }
                handler(client, peer)
            } catch where [ECONNABORTED, EPROTO, EPERM].contains(error.errno) {
                continue
            } catch {
                onError(error)
                try? registration.map { try loop.setInterest([], for: $0) }
                loop.schedule(after: .milliseconds(100)) { [self] in
                    guard !isStopped, let registration else { return }
                    do throws(TransportError) { try loop.setInterest(.read, for: registration) } catch { onError(error) }
                }
                return
            }
        }
    }

    func eventLoopIsClosing() {
        stop()
    }

    /// Stops accepting and closes the listening socket.
    func stop() {
        loop.assertOnExecutor()
        guard !isStopped else { return }
        isStopped = true
        if let registration { loop.deregister(registration) }
        socket.close()
    }
}
