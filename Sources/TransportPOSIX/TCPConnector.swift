import Glibc
import TransportCore

/// Opens a TCP connection to whichever of several addresses answers first.
public enum TCPConnector {
    /// Races connection attempts Happy-Eyeballs style (RFC 8305 §5): addresses are tried
    /// alternating between families, starting with the first one given; a new attempt starts
    /// every `attemptDelay`, or at once when the previous one fails; the first to connect
    /// wins and the others are closed.
    /// - Parameters:
    ///   - interface: the name of the only interface the connection may use (SO_BINDTODEVICE),
    ///     or nil for the one the routing table picks. An address reached over another
    ///     interface then fails to connect instead of being reached there.
    ///   - loop: where the attempts wait for their sockets and deadlines.
    /// - Returns: the connected socket and the address that won.
    /// - Throws: `TransportError` naming every address tried and why it failed (`isRefused`
    ///   when every address refused), or `CancellationError`.
    public static func connect(to endpoints: [SocketEndpoint], interface: String? = nil, attemptDelay: Duration = .milliseconds(250),
                               timeout: Duration = .seconds(5), on loop: EventLoop) async throws -> (Socket, SocketEndpoint) {
        guard !endpoints.isEmpty else { throw TransportError("connect", message: "there is no address to connect to") }
        let race = ConnectionRace(endpoints: interleaved(endpoints), interface: interface, attemptDelay: attemptDelay, timeout: timeout, loop: loop)
        // The race lives on the loop; cancelling the task reaches it there.
        let cancel = LoopWork { race.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                loop.execute { race.start(continuation) }
            }
        } onCancel: {
            loop.execute { cancel.run() }
        }
    }

    /// Alternates address families, keeping each family's order and starting with the family
    /// of the first address.
    static func interleaved(_ endpoints: [SocketEndpoint]) -> [SocketEndpoint] {
        guard let first = endpoints.first?.address.family else { return [] }
        var preferred = endpoints.filter { $0.address.family == first }[...]
        var other = endpoints.filter { $0.address.family != first }[...]
        var result: [SocketEndpoint] = []
        while !preferred.isEmpty || !other.isEmpty {
            if let next = preferred.popFirst() { result.append(next) }
            if let next = other.popFirst() { result.append(next) }
        }
        return result
    }
}

/// One race between connection attempts, on its loop.
private final class ConnectionRace {
    /// One socket connecting; the loop reports it writable once the connect is decided.
    private final class Attempt: EventLoopSelectable {
        let socket: Socket
        let endpoint: SocketEndpoint
        var registration: EventLoopRegistration?
        weak var race: ConnectionRace?

        init(socket: Socket, endpoint: SocketEndpoint, race: ConnectionRace) {
            self.socket = socket
            self.endpoint = endpoint
            self.race = race
        }

        func ready(_ readiness: EventLoop.Readiness) { race?.attemptFinished(self) }
        func eventLoopIsClosing() { race?.finish(CancellationError()) }
    }

    private let endpoints: [SocketEndpoint]
    private let interface: String?
    private let attemptDelay: Duration
    private let timeout: Duration
    private let loop: EventLoop
    private var continuation: CheckedContinuation<(Socket, SocketEndpoint), any Error>?
    private var nextIndex = 0
    private var inFlight: [Attempt] = []
    private var failures: [String] = []
    /// Whether every attempt that failed was refused (ECONNREFUSED).
    private var everyFailureRefused = true
    private var timers: [any ScheduledWork] = []
    private var isDone = false

    init(endpoints: [SocketEndpoint], interface: String?, attemptDelay: Duration, timeout: Duration, loop: EventLoop) {
        self.endpoints = endpoints
        self.interface = interface
        self.attemptDelay = attemptDelay
        self.timeout = timeout
        self.loop = loop
    }

    func start(_ continuation: CheckedContinuation<(Socket, SocketEndpoint), any Error>) {
        loop.assertOnExecutor()
        guard !isDone else { continuation.resume(throwing: CancellationError()); return }
        self.continuation = continuation
        after(timeout) { [self] in
            let tried = failures + inFlight.map { "\($0.endpoint) (no answer)" }
            finish(TransportError("connect", message: "no address answered within \(timeout.secondsText): " + tried.joined(separator: ", ")))
        }
        startNextAttempt()
    }

    func cancel() {
        finish(CancellationError())
    }

    private func startNextAttempt() {
        guard !isDone else { return }
        guard nextIndex < endpoints.count else {
            if inFlight.isEmpty {
                finish(TransportError("connect", message: "could not connect to " + failures.joined(separator: ", "),
                                      errno: everyFailureRefused ? ECONNREFUSED : 0))
            }
            return
        }
        let endpoint = endpoints[nextIndex]
        nextIndex += 1
        do throws(TransportError) {
            let socket = try Socket.tcp(endpoint.address.family)
            if let interface { try socket.bind(toInterface: interface) }
            switch try socket.connect(to: endpoint) {
            case .processed:
                finish(nil)
                handOver(socket, endpoint)
            case .wouldBlock:
                let attempt = Attempt(socket: socket, endpoint: endpoint, race: self)
                attempt.registration = try loop.register(socket.fd, interest: .write, owner: attempt)
                inFlight.append(attempt)
                after(attemptDelay) { [self] in startNextAttempt() }
            }
        } catch {
            failed(endpoint, error.errno, "\(error)")
            startNextAttempt()
        }
    }

    private func attemptFinished(_ attempt: Attempt) {
        guard let index = inFlight.firstIndex(where: { $0 === attempt }) else { return }
        inFlight.remove(at: index)
        // The loop lets go of the socket before it is closed or handed over, so the winner's
        // connection can register the same descriptor.
        attempt.registration.map(loop.deregister)
        let code: Int32
        do { code = try attempt.socket.pendingError() } catch { code = error.errno }
        if code == 0 {
            finish(nil)
            handOver(attempt.socket, attempt.endpoint)
        } else {
            attempt.socket.close()
            failed(attempt.endpoint, code, String(cString: strerror(code)))
            startNextAttempt()
        }
    }

    private func failed(_ endpoint: SocketEndpoint, _ code: Int32, _ reason: String) {
        failures.append("\(endpoint) (\(reason))")
        if code != ECONNREFUSED { everyFailureRefused = false }
    }

    private func after(_ delay: Duration, _ body: @escaping () -> Void) {
        timers.append(loop.schedule(after: delay, body))
    }

    /// Ends the race: stops timers and the other attempts, and reports `failure` if any.
    /// A success is reported by `handOver`.
    private func finish(_ failure: (any Error)?) {
        guard !isDone else { return }
        isDone = true
        timers.forEach { $0.cancel() }
        timers = []
        for attempt in inFlight {
            attempt.registration.map(loop.deregister)
            attempt.socket.close()
        }
        inFlight = []
        if let failure {
            continuation?.resume(throwing: failure)
            continuation = nil
        }
    }

    private func handOver(_ socket: Socket, _ endpoint: SocketEndpoint) {
        continuation?.resume(returning: (socket, endpoint))
        continuation = nil
    }
}
