import TransportCore
import TransportPOSIX

/// The server's side of an accepted connection before it knows what the client speaks: it
/// waits for the client's first byte. 0x16 (a TLS handshake record) makes it a `TLSStream`
/// server; anything else is plaintext protocol v1, passed through unchanged when
/// `allowsPlaintext`, and otherwise answered with the caller's refusal bytes (a plaintext
/// `ERROR tls-required` frame) before the connection is finished and closed.
///
/// The server sends nothing before that first byte: what the upper layer sends meanwhile
/// waits here (up to `outboxLimit`; past it the stream fails and closes, as `Connection`
/// does) and then goes through the chosen path, or is dropped on refusal. `decision` says
/// which path was taken; `secureSession` is set once the TLS handshake completes.
///
/// A refused connection closes with `.failed(TransportError)` whose call is "TLS" and whose
/// text says the client sent plaintext; a failed TLS handshake closes as `TLSStream` does.
///
/// - Important: every method must be called on the wrapped stream's executor (the one
///   `scheduler` runs on), and the handlers run there.
public final class NegotiatingServerStream: ByteStream {
    /// What the client's first byte decided.
    public enum Decision: Sendable, Hashable {
        /// TLS 1.3 (the first byte was 0x16).
        case tls
        /// Plaintext protocol v1, allowed.
        case plaintext
        /// Plaintext, refused: the refusal bytes were sent and the stream closed.
        case refused
    }

    /// The first byte of a TLS handshake record.
    public static let tlsHandshakeByte: UInt8 = 0x16

    /// The path taken, once the first byte has come; nil before.
    public private(set) var decision: Decision?
    /// Whether the client speaks plaintext v1 and that is allowed: no key, no safety code.
    public var isPlaintext: Bool { decision == .plaintext }
    /// The most bytes that may wait for the decision (and then for the TLS handshake).
    public let outboxLimit: Int
    public var peer: SocketEndpoint? { inner.peer }
    public private(set) var isClosed = false
    public var isOpen: Bool { !isClosed && !isFinishing }
    public var bufferedByteCount: Int { waiting.count + (tls?.bufferedByteCount ?? inner.bufferedByteCount) }
    public var heldByteCount: Int { waiting.capacity + (tls?.heldByteCount ?? inner.heldByteCount) }
    /// The TLS stream's once it exists (it counts queued plaintext as the ciphertext it becomes).
    public var sentByteCount: Int { tls?.sentByteCount ?? inner.sentByteCount }
    public var deliveredByteCount: Int { tls?.deliveredByteCount ?? inner.deliveredByteCount }
    public func offerQueuedBytes() { tls?.offerQueuedBytes() ?? inner.offerQueuedBytes() }
    public var secureSession: SecureSession? { tls?.secureSession }

    // All guarded by the executor (see above).
    private let inner: any ByteStream
    private let scheduler: any Scheduler
    private let identity: Identity
    private let allowsPlaintext: Bool
    private let refusal: [UInt8]
    private var tls: TLSStream?
    private var waiting: [UInt8] = []
    private var isFinishing = false
    private var isPaused = false
    private var upper = UpperLayer()

    /// Wraps an accepted connection, which must not be started yet (`start` starts it).
    /// - Parameters:
    ///   - stream: the accepted connection.
    ///   - scheduler: the executor `stream` runs on, and its clock.
    ///   - identity: the server's key, presented to TLS clients.
    ///   - allowsPlaintext: whether a client that does not start with TLS may speak plaintext v1.
    ///   - refusal: sent to a plaintext client when plaintext is not allowed.
    ///   - outboxLimit: the most bytes that may wait for the decision (`TLSStream.waitingLimit`).
    public init(over stream: any ByteStream, scheduler: any Scheduler, identity: Identity, allowsPlaintext: Bool,
                refusal: [UInt8], outboxLimit: Int = TLSStream.waitingLimit) {
        self.inner = stream
        self.scheduler = scheduler
        self.identity = identity
        self.allowsPlaintext = allowsPlaintext
        self.refusal = refusal
        self.outboxLimit = outboxLimit
    }

    public func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (Connection.CloseReason) -> Void) {
        upper.onBytes = onBytes
        upper.onClose = onClose
        inner.start(onBytes: { [self] in receive($0) }, onClose: { [self] in innerClosed($0) })
    }

    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard isOpen else { return false }
        if let tls { return tls.send(bytes) }
        if decision == .plaintext { return inner.send(bytes) }
        guard waiting.count + bytes.count <= outboxLimit else {
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        waiting.append(contentsOf: bytes)
        return true
    }

    /// Encodes straight into the chosen path's buffer (the TLS stream's gathered plaintext, the
    /// plaintext connection's outbox); before the decision into an array that then waits.
    @discardableResult
    public func send(writing write: (inout [UInt8]) -> Void) -> Bool {
        guard isOpen else { return false }
        if let tls { return tls.send(writing: write) }
        if decision == .plaintext { return inner.send(writing: write) }
        var bytes: [UInt8] = []
        write(&bytes)
        return send(bytes)
    }

    /// Finishes the chosen path. Before the decision nothing can be sent (it is not known yet
    /// whether the client speaks TLS), so the connection closes at once: a room that turns
    /// away connections which never sent a byte holds no socket for them.
    public func finish() {
        guard isOpen else { return }
        guard decision != nil else { return close(.closedLocally) }
        isFinishing = true
        if let tls { tls.finish() } else if decision == .plaintext { inner.finish() }
    }

    public func close() { close(.closedLocally) }

    public func pauseReading() {
        isPaused = true
        if let tls { tls.pauseReading() } else { inner.pauseReading() }
    }

    public func resumeReading() {
        isPaused = false
        if let tls { tls.resumeReading() } else { inner.resumeReading() }
    }

    public func whenDrained(toAtMost mark: Int, _ handler: (() -> Void)?) {
        upper.onDrained = handler
        upper.drainMark = mark
        if let tls { tls.whenDrained(toAtMost: mark, handler) } else if decision == .plaintext { inner.whenDrained(toAtMost: mark, handler) }
    }

    // MARK: - From the wrapped stream

    private func receive(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        if let tls { return tls.receive(bytes) }
        if decision == .plaintext { return upper.onBytes(bytes) }
        guard let first = bytes.first else { return }
        if first == Self.tlsHandshakeByte {
            startTLS(with: bytes)
        } else if allowsPlaintext {
            startPlaintext(with: bytes)
        } else {
            refuse()
        }
    }

    private func innerClosed(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        if let tls { return tls.innerClosed(reason) }
        isClosed = true
        if decision == nil, reason == .closedByPeer {
            return report(.failed(TransportError("TLS", message: "the client closed the connection before sending anything")))
        }
        report(reason)
    }

    // MARK: - The three paths

    private func startTLS(with first: [UInt8]) {
        decision = .tls
        let stream: TLSStream
        do {
            stream = try TLSStream(over: inner, scheduler: scheduler, identity: identity, role: .server, outboxLimit: outboxLimit)
        } catch {
            return close(.failed(TransportError("TLS", message: error.message)))
        }
        tls = stream
        stream.begin(onBytes: { [weak self] in self?.upper.onBytes($0) }, onClose: { [weak self] in self?.tlsClosed($0) })
        if isPaused { stream.pauseReading() }
        if upper.onDrained != nil { stream.whenDrained(toAtMost: upper.drainMark, upper.onDrained) }
        let queued = waiting
        waiting = []
        if !queued.isEmpty, !stream.send(queued) { return }
        stream.receive(first)
    }

    private func startPlaintext(with first: [UInt8]) {
        decision = .plaintext
        if upper.onDrained != nil { inner.whenDrained(toAtMost: upper.drainMark, upper.onDrained) }
        let queued = waiting
        waiting = []
        if !queued.isEmpty, !inner.send(queued) { return }
        upper.onBytes(first)
    }

    /// Plaintext not allowed: the refusal goes out alone, then the connection ends.
    private func refuse() {
        decision = .refused
        waiting = []
        isClosed = true
        _ = inner.send(refusal)
        Lingering.finishThenClose(inner, scheduler: scheduler)
        report(.failed(TransportError("TLS", message: "the client sent plaintext (protocol version 1) and this room requires TLS 1.3; refused")))
    }

    private func tlsClosed(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        isClosed = true
        report(reason)
    }

    private func close(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        // Closed first: what the wrapped stream reports from here on is no news.
        isClosed = true
        if let tls { tls.close() } else { inner.close() }
        report(reason)
    }

    /// Tells the upper layer, once; `isClosed` is already set.
    private func report(_ reason: Connection.CloseReason) {
        waiting = []
        let end = upper.takeEnd()
        end(reason)
    }
}
