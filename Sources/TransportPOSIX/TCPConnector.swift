@preconcurrency import Dispatch // sources are thread-safe; Linux's overlay lacks Sendable
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
    /// - Returns: the connected socket and the address that won.
    /// - Throws: `TransportError` naming every address tried and why it failed, or
    ///   `CancellationError`.
    public static func connect(to endpoints: [SocketEndpoint], interface: String? = nil, attemptDelay: Duration = .milliseconds(250),
                               timeout: Duration = .seconds(5)) async throws -> (Socket, SocketEndpoint) {
        guard !endpoints.isEmpty else { throw TransportError("connect", message: "there is no address to connect to") }
        let race = ConnectionRace(endpoints: interleaved(endpoints), interface: interface, attemptDelay: attemptDelay, timeout: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in race.start(continuation) }
        } onCancel: {
            race.cancel()
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

/// One race between connection attempts.
/// - Important: every field is used only on `queue`.
private final class ConnectionRace: @unchecked Sendable {
    private struct Attempt {
        let socket: Socket
        let endpoint: SocketEndpoint
        let source: any DispatchSourceWrite
    }

    /// The attempt that connected; handed over once its source is fully cancelled.
    private var winner: Socket?

    private let endpoints: [SocketEndpoint]
    private let interface: String?
    private let attemptDelay: Duration
    private let timeout: Duration
    private let queue = DispatchQueue(label: "svc.connect")
    private var continuation: CheckedContinuation<(Socket, SocketEndpoint), any Error>?
    private var nextIndex = 0
    private var inFlight: [Attempt] = []
    private var failures: [String] = []
    private var timers: [any DispatchSourceTimer] = []
    private var isDone = false

    init(endpoints: [SocketEndpoint], interface: String?, attemptDelay: Duration, timeout: Duration) {
        self.endpoints = endpoints
        self.interface = interface
        self.attemptDelay = attemptDelay
        self.timeout = timeout
    }

    func start(_ continuation: CheckedContinuation<(Socket, SocketEndpoint), any Error>) {
        queue.async { [self] in
            guard !isDone else { continuation.resume(throwing: CancellationError()); return }
            self.continuation = continuation
            after(timeout) { [self] in
                let tried = failures + inFlight.map { "\($0.endpoint) (no answer)" }
                finish(TransportError("connect", message: "no address answered within \(timeout.secondsText): " + tried.joined(separator: ", ")))
            }
            startNextAttempt()
        }
    }

    func cancel() {
        queue.async { [self] in finish(CancellationError()) }
    }

    private func startNextAttempt() {
        guard !isDone else { return }
        guard nextIndex < endpoints.count else {
            if inFlight.isEmpty {
                finish(TransportError("connect", message: "could not connect to " + failures.joined(separator: ", ")))
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
                let source = DispatchSource.makeWriteSource(fileDescriptor: socket.fd, queue: queue)
                source.setEventHandler { [self] in attemptFinished(socket) }
                // Only once the source no longer watches the fd may it be closed, or reused
                // by the winner's connection; closing earlier lets a new socket with the same
                // fd number lose its events.
                source.setCancelHandler { [self] in
                    if winner === socket { handOver(socket, endpoint) } else { socket.close() }
                }
                source.resume()
                inFlight.append(Attempt(socket: socket, endpoint: endpoint, source: source))
                after(attemptDelay) { [self] in startNextAttempt() }
            }
        } catch {
            failures.append("\(endpoint) (\(error))")
            startNextAttempt()
        }
    }

    private func attemptFinished(_ socket: Socket) {
        guard let index = inFlight.firstIndex(where: { $0.socket === socket }) else { return }
        let attempt = inFlight.remove(at: index)
        let code: Int32
        do { code = try socket.pendingError() } catch { code = error.errno }
        if code == 0 {
            winner = socket
            finish(nil)
        } else {
            failures.append("\(attempt.endpoint) (\(String(cString: strerror(code))))")
            startNextAttempt()
        }
        attempt.source.cancel()
    }

    private func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)))
        timer.setEventHandler(handler: body)
        timer.resume()
        timers.append(timer)
    }

    /// Ends the race: stops timers and the other attempts, and reports `failure` if any.
    /// A success is reported by `handOver`.
    private func finish(_ failure: (any Error)?) {
        guard !isDone else { return }
        isDone = true
        timers.forEach { $0.cancel() }
        inFlight.forEach { $0.source.cancel() }
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
