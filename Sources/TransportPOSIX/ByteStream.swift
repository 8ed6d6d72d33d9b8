import TransportCore

/// What a framed link needs from a byte stream: bytes in through a handler, bytes out through
/// a bounded outbox, an orderly or an abrupt end, and reading paused for a slow consumer.
///
/// `Connection` is the TCP one; MessagingTesting has an in-memory pair, so that rooms and
/// transfers are tested and fuzzed without sockets.
///
/// - Important: every method is called on the executor the stream was made for, and the
///   handlers run there. A stream is not `Sendable`: it lives on that executor (an event
///   loop for `Connection`), and other threads reach it through the executor's `execute`.
public protocol ByteStream: AnyObject {
    /// Who is at the other end, when known.
    var peer: SocketEndpoint? { get }
    /// Whether the stream can still send (not closed, not finishing).
    var isOpen: Bool { get }
    /// Whether the stream is closed for good. (After `finish()` it no longer sends, but it
    /// still receives until the peer closes.)
    var isClosed: Bool { get }
    /// Bytes queued but not yet taken by the other end (or the kernel).
    var bufferedByteCount: Int { get }
    /// The memory the outbox holds for them: at least `bufferedByteCount`, with what was
    /// taken but not yet let go and room to grow (what a bound on memory counts).
    var heldByteCount: Int { get }
    /// Bytes taken from the outbox so far (by the kernel, or the other end), in the units of
    /// `bufferedByteCount`: bytes queued when `sentByteCount + bufferedByteCount` was `n` have
    /// all left once `sentByteCount` reaches `n`. It grows whenever the outbox moves, also
    /// when it does not drain to a mark.
    var sentByteCount: Int { get }
    /// Bytes the other end has taken from the connection so far (for TCP: acknowledged by the
    /// peer's kernel, which takes them into its receive buffer whether or not the peer reads
    /// them), in the units of `sentByteCount`, which it never passes. Unlike `sentByteCount`
    /// it does not move when only our own kernel takes bytes. It never goes down.
    var deliveredByteCount: Int { get }
    /// For a secure link whose handshake completed: the peer's key and the session's safety
    /// code; nil for a plain stream and before the handshake ends.
    var secureSession: SecureSession? { get }
    /// For the client end of a secure link: the server key its policy refused (the handshake
    /// then failed and the stream closed); nil otherwise.
    var rejectedPeerKey: PublicKeyFingerprint? { get }

    /// Starts reading. `onBytes` gets each chunk as it arrives; `onClose` is called once.
    func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (Connection.CloseReason) -> Void)
    /// Queues bytes for sending. Returns false (and closes the stream with `.failed`) when
    /// the outbox would pass its limit, and false when the stream cannot send any more.
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Queues the bytes `write` appends to the buffer it is given, as `send(_:)` queues
    /// bytes: for a sender that encodes messages straight into the outbox (`Connection`) rather
    /// than into a buffer of its own that is then copied. `write` only appends, and does not
    /// use the stream.
    @discardableResult
    func send(writing write: (inout [UInt8]) -> Void) -> Bool
    /// Like `send(_:)`, for bytes the sender gathered over the turn and hands over at its end:
    /// written now rather than gathered again (`Connection`); by default `send(_:)`.
    @discardableResult
    func sendNow(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Offers what waits in the outbox to the other end now, without waiting to be told there
    /// is room: for a check of whether the peer reads (`sentByteCount`). Linux reports a TCP
    /// socket writable only once about a third of its send buffer is free, so a peer that
    /// reads a few KB a second would otherwise seem to take nothing for minutes. By default
    /// nothing (streams that deliver on their own).
    func offerQueuedBytes()
    /// Sends what is queued, then ends the sending side; the stream closes when the peer
    /// closes its side.
    func finish()
    /// Closes at once; queued bytes are dropped. `onClose` gets `.closedLocally`.
    func close()
    /// Stops reading until `resumeReading()`.
    func pauseReading()
    /// Reads again after `pauseReading()`.
    func resumeReading()
    /// Calls `handler` (later, on the stream's executor) each time the outbox empties, and
    /// each time a write takes it from over `mark` bytes to `mark` or fewer (a low-water mark:
    /// a producer that waits for the outbox to fall under a limit need not wait for it to
    /// empty). With `mark` 0: only when it empties.
    func whenDrained(toAtMost mark: Int, _ handler: (() -> Void)?)
}

extension ByteStream {
    /// Calls `handler` (later, on the stream's executor) each time the outbox empties.
    public func whenDrained(_ handler: (() -> Void)?) { whenDrained(toAtMost: 0, handler) }

    /// Plain streams (TCP, in-memory) have no secure session.
    public var secureSession: SecureSession? { nil }
    /// Plain streams judge no keys.
    public var rejectedPeerKey: PublicKeyFingerprint? { nil }

    /// Encodes into a buffer of its own, then sends it: streams that keep no plain outbox
    /// (TLS encrypts what it is given) have nothing to lend.
    @discardableResult
    public func send(writing write: (inout [UInt8]) -> Void) -> Bool {
        var bytes: [UInt8] = []
        write(&bytes)
        return send(bytes)
    }

    /// Streams that gather nothing themselves send as `send(_:)` does.
    @discardableResult
    public func sendNow(_ bytes: UnsafeRawBufferPointer) -> Bool { send(bytes) }

    /// Streams that deliver on their own have nothing to offer.
    public func offerQueuedBytes() {}

    /// Streams whose "sent" is the other end's taking (in-memory) deliver what they send.
    public var deliveredByteCount: Int { sentByteCount }

    /// Queues bytes for sending; see `send(_:)` for raw bytes.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }
}

extension Connection: ByteStream {}
