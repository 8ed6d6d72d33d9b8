import CSSL
import TransportCore
import TransportPOSIX

/// TLS 1.3 over any `ByteStream` (a TCP `Connection`, an in-memory stream): protocol
/// version 2's secure link. Ciphertext goes through the wrapped stream; this stream carries
/// the plaintext, so rooms and transfers use it exactly as a plain stream.
///
/// Both sides present their `Identity`. The server requires a client key and accepts any (the
/// room decides what a key may do); the client asks `acceptsServerKey` inside the handshake,
/// and a "no" ends the handshake before any application byte is sent (`rejectedPeerKey` then
/// holds the key that was refused). When the handshake completes, `secureSession` gives the
/// peer's key and the session's safety code.
///
/// Bytes sent before then wait here, up to `outboxLimit` (past it the stream fails and closes,
/// as `Connection` does); afterwards the wrapped stream's own outbox limit applies.
///
/// After the handshake, small sends are gathered as `Connection` gathers them: the plaintext of
/// one turn of the loop waits in one buffer (`send(writing:)` encodes straight into it) and is
/// encrypted at the turn's end in as few records as it fills, not one record (5-byte header,
/// 16-byte tag, one `SSL_write`) and one allocation per message, and the records are written at
/// once (`ByteStream.sendNow`), not after what else runs at the end of the iteration. Only while the whole outbox,
/// the gathered bytes counted as the ciphertext they become, stays within `outboxLimit`; a send
/// that would pass it, or one of `gatherLimit` bytes or more, is encrypted at once behind what
/// was gathered, and the wrapped stream's limit judges it then, as before. 64 KiB gathered are
/// encrypted at once too.
///
/// A handshake that fails closes the stream with `.failed(TransportError)` whose call is
/// "TLS" and whose text says what happened, e.g. `TLS: the peer does not speak TLS 1.3 ...`;
/// the wrapped stream then gets a moment (`lingerAfterFailure`) to carry the alert before it is
/// closed. The upper layer's handshake deadline covers a peer that stops in the middle.
///
/// - Important: every method must be called on the wrapped stream's executor (the one
///   `scheduler` runs on), and the handlers run there. `acceptsServerKey` runs inside the
///   handshake: it must decide and return, not call back into this stream.
public final class TLSStream: ByteStream {
    /// Which end of the handshake this is.
    public enum Role {
        /// Requires a client key, accepts any.
        case server
        /// Asks `acceptsServerKey` about the server's key; false aborts the handshake.
        case client(acceptsServerKey: (PublicKeyFingerprint) -> Bool)
    }

    /// The ALPN name of the protocol inside: `p2pm/2`.
    public static let applicationProtocol = "p2pm/2"
    /// The label of the keying material the safety code comes from.
    public static let safetyCodeLabel = "EXPORTER-p2pm-safety-code"
    /// The label of the keying material the room-code exchange is bound to (its session id).
    public static let roomCodeLabel = "EXPORTER-p2pm-room-code"
    /// How many bytes of keying material the room-code exchange is bound to.
    public static let roomCodeSessionIDLength = 32
    /// How long the wrapped stream may take to carry a failure's alert before it is closed.
    public static let lingerAfterFailure: Duration = .seconds(2)
    /// The most plaintext that waits for the handshake by default: a `Connection`'s outbox
    /// (4 MiB) less room for what TLS adds (22 bytes a 16 KiB record, and the last handshake
    /// flight), so that what waited fits the wrapped stream's outbox once it is encrypted.
    public static let waitingLimit = (4 << 20) - (64 << 10)
    /// The most plaintext one `onBytes` call gets.
    static let deliveryChunk = 65_536
    /// The most plaintext in one TLS record.
    static let recordSize = 16_384
    /// Records that go in and out of the memory BIOs at once: a few, as their buffers never
    /// shrink (fed a 256 KiB read whole, each connection would keep 256 KiB), but not one at a
    /// time (a write to the socket and a delivery upwards for every 16 KiB slowed transfers).
    static let recordsAtOnce = 4
    /// Ciphertext handed to OpenSSL at once: whole records with their headers and expansion.
    static let ciphertextSlice = recordsAtOnce * (recordSize + 512)
    /// Key updates a peer may send in a burst; one more is allowed every `keyUpdateInterval`.
    /// A peer that sends more (each costs us a key derivation) is cut off.
    static let keyUpdateBurst = 8
    static let keyUpdateInterval: Duration = .seconds(10)
    /// What TLS 1.3 adds to each record with the AEAD suites OpenSSL offers (AES-GCM,
    /// ChaCha20-Poly1305) and no padding: a 5-byte header, the inner content type and a 16-byte
    /// tag. Gathered plaintext counts in `bufferedByteCount` as the ciphertext it becomes.
    static let recordOverhead = 22
    /// Sends smaller than this are gathered until the turn's end; and once this much is
    /// gathered it is encrypted at once (a few whole records, the size `encrypt` flushes).
    static let gatherLimit = recordsAtOnce * recordSize

    /// The ciphertext `count` bytes of plaintext become when `encrypt` cuts them into records.
    static func ciphertextSize(ofPlaintext count: Int) -> Int {
        count + (count + recordSize - 1) / recordSize * recordOverhead
    }

    /// The most bytes that may wait for the handshake to complete.
    public let outboxLimit: Int
    /// The peer's key and the session's safety code, once the handshake has completed.
    ///
    /// In TLS 1.3 a client's handshake completes before the server has judged the client's
    /// key, so on the client a session can still fail right after; count it as admitted only
    /// when the room says so.
    public private(set) var secureSession: SecureSession?
    /// Client: the server key the policy refused, once it has (the handshake then fails).
    public private(set) var rejectedPeerKey: PublicKeyFingerprint?
    public private(set) var isClosed = false
    public var isOpen: Bool { !isClosed && !isFinishing }
    public var peer: SocketEndpoint? { inner.peer }
    /// Plaintext waiting for the handshake and plaintext gathered in this turn, each counted as
    /// the ciphertext it becomes, and the wrapped stream's ciphertext.
    public var bufferedByteCount: Int {
        Self.ciphertextSize(ofPlaintext: waiting.count) + Self.ciphertextSize(ofPlaintext: gathered.count)
            + inner.bufferedByteCount
    }
    /// The plaintext buffers' memory and the wrapped stream's.
    public var heldByteCount: Int { waiting.capacity + gathered.capacity + inner.heldByteCount }
    /// Ciphertext the wrapped stream has sent, plus what queued plaintext became less than
    /// `bufferedByteCount` counted for it (`sentShortfall`), so that bytes counted as queued
    /// have left when `sentByteCount` reaches `sentByteCount + bufferedByteCount` of then. It
    /// never goes down: bytes OpenSSL adds on its own (the answer to a peer's key update) are
    /// not taken off, they only make such a mark come that much early. (Taking them off let a
    /// peer that reads nothing seem to move the count, and so hold a stalled link, with a key
    /// update before each ping.)
    public var sentByteCount: Int { inner.sentByteCount + sentShortfall }
    /// What the wrapped stream delivered, in the units of `sentByteCount`.
    public var deliveredByteCount: Int { inner.deliveredByteCount + sentShortfall }

    // All guarded by the executor (see above).
    private let inner: any ByteStream
    private let scheduler: any Scheduler
    /// Keeps the `SSL_CTX` the `SSL` was made from alive.
    private let identity: Identity
    private let acceptsServerKey: ((PublicKeyFingerprint) -> Bool)?
    private var isServer: Bool { acceptsServerKey == nil }
    /// `SSL *`, owning both memory BIOs.
    private let ssl: OpaquePointer
    /// Ciphertext from the peer goes in here (`BIO *`, owned by `ssl`).
    private let networkIn: OpaquePointer
    /// Ciphertext for the peer comes out here (`BIO *`, owned by `ssl`).
    private let networkOut: OpaquePointer
    /// Plaintext sent before the handshake completed.
    private var waiting: [UInt8] = []
    /// Plaintext sent after the handshake in this turn, encrypted at its end (`flushGathered`).
    /// Let go once encrypted, so that an idle connection keeps no buffer.
    private var gathered: [UInt8] = []
    private var isGatheredFlushScheduled = false
    /// How much less ciphertext queued plaintext became than `bufferedByteCount` counted for
    /// it (none while each record adds `recordOverhead`); only grows; see `sentByteCount`.
    private var sentShortfall = 0
    private var isFinishing = false
    private var isPaused = false
    private var isDeliveryScheduled = false
    /// Ciphertext received and not yet handed to OpenSSL, from `unreadStart` on: the memory BIO
    /// (whose buffer never shrinks) gets a few records at a time, never a whole read; what is
    /// left when reading pauses after the handshake waits here, and the array is let go once
    /// fed. The wrapped stream is read only while this is empty, so it holds at most one read.
    private var unread: [UInt8] = []
    /// How much of `unread` was already handed to OpenSSL (walked by index, not copied).
    private var unreadStart = 0
    /// Server: the client's hello named no `p2pm/2` (the handshake fails because of it).
    private var clientOfferedNoProtocol = false
    /// The peer's key as the verify callback saw and accepted it (computed once a handshake).
    private var verifiedPeerKey: PublicKeyFingerprint?
    /// The peer's certificate carries a key of a kind we do not accept (not P-256 or Ed25519).
    private var peerKeyOfOtherKind = false
    /// Key updates the peer may still send now, and when that was counted.
    private var keyUpdateAllowance = Double(keyUpdateBurst)
    private var keyUpdateCounted: ContinuousClock.Instant?
    /// The peer sent key updates faster than allowed: the link fails at the next turn.
    private var keyUpdateFlood = false
    /// How the wrapped stream ended, while plaintext inside `ssl` still waits for a reader.
    private var innerEnd: Connection.CloseReason?
    private var upper = UpperLayer()

    /// Wraps `stream`, which must not be started yet (`start` starts it).
    /// - Parameters:
    ///   - stream: carries the ciphertext.
    ///   - scheduler: the executor `stream` runs on, and its clock.
    ///   - identity: the key and certificate this end presents.
    ///   - role: server, or client with its policy for the server's key.
    ///   - outboxLimit: the most plaintext that may wait for the handshake (`waitingLimit`).
    /// - Throws: `SecureTransportError` (`.openSSL`) when OpenSSL cannot make the connection.
    public init(over stream: any ByteStream, scheduler: any Scheduler, identity: Identity, role: Role,
                outboxLimit: Int = TLSStream.waitingLimit) throws(SecureTransportError) {
        let isServer: Bool
        switch role {
        case .server:
            isServer = true
            acceptsServerKey = nil
        case .client(let policy):
            isServer = false
            acceptsServerKey = policy
        }
        ERR_clear_error()
        guard let ssl = SSL_new(try identity.context(for: isServer ? .server : .client)) else { throw OpenSSL.failure("SSL_new") }
        guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw OpenSSL.failure("BIO_new")
        }
        SSL_set_bio(ssl, networkIn, networkOut)
        if isServer { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
        self.inner = stream
        self.scheduler = scheduler
        self.identity = identity
        self.outboxLimit = outboxLimit
        self.ssl = ssl
        self.networkIn = networkIn
        self.networkOut = networkOut
        _ = cssl_set_app_data(ssl, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        SSL_free(ssl)
    }

    /// Starts the wrapped stream and the handshake (the client sends its hello at once).
    public func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (Connection.CloseReason) -> Void) {
        inner.start(onBytes: { [self] in receive($0) }, onClose: { [self] in innerClosed($0) })
        begin(onBytes: onBytes, onClose: onClose)
    }

    /// Starts the handshake over a wrapped stream someone else reads (`NegotiatingServerStream`
    /// hands its bytes to `receive` and its end to `innerClosed`).
    func begin(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (Connection.CloseReason) -> Void) {
        upper.onBytes = onBytes
        upper.onClose = onClose
        if !isServer { advance() }
    }

    /// Queues plaintext: after the handshake gathered until the turn's end, or encrypted at once
    /// (see the type's notes); kept until then (up to `outboxLimit`). Returns false, and closes
    /// with `.failed`, past that limit (after the handshake: the wrapped stream's); false when
    /// the stream cannot send any more.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        scheduler.assertOnExecutor()
        guard isOpen else { return false }
        guard secureSession != nil else {
            guard waiting.count + bytes.count <= outboxLimit else {
                close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
                return false
            }
            waiting.append(contentsOf: bytes)
            return true
        }
        guard !bytes.isEmpty else { return true }
        if gathers(bytes.count, more: true) {
            gathered.append(contentsOf: bytes)
            return gatheredGrew()
        }
        return flushGathered() && encrypt(bytes)
    }

    /// Encodes straight into the gathered plaintext after the handshake (a message is not first
    /// encoded into an array of its own and copied); as `send(_:)` otherwise.
    @discardableResult
    public func send(writing write: (inout [UInt8]) -> Void) -> Bool {
        scheduler.assertOnExecutor()
        guard isOpen else { return false }
        guard secureSession != nil else {
            var bytes: [UInt8] = []
            write(&bytes)
            return send(bytes)
        }
        let before = gathered.count
        write(&gathered)
        let added = gathered.count - before
        guard added > 0 else { return true }
        if gathers(added, more: false) { return gatheredGrew() }
        // Too large to wait: what was gathered before goes first, then these bytes at once. The
        // buffer is let go either way (taken whole, or emptied by `flushGathered`): it keeps no
        // large message's capacity.
        let bytes: [UInt8]
        if before == 0 {
            bytes = gathered
            gathered = []
        } else {
            bytes = Array(gathered[before...])
            gathered.removeSubrange(before...)
        }
        return flushGathered() && bytes.withUnsafeBytes { encrypt($0) }
    }

    /// Whether a send of `count` bytes waits for the turn's end: small, and the whole outbox
    /// within `outboxLimit` with it (`more`: not yet in `gathered`).
    private func gathers(_ count: Int, more: Bool) -> Bool {
        count < Self.gatherLimit
            && inner.bufferedByteCount + Self.ciphertextSize(ofPlaintext: gathered.count + (more ? count : 0)) <= outboxLimit
    }

    /// `gathered` grew: encrypted now once it holds `gatherLimit` bytes, else at the turn's end.
    /// False when encrypting failed (the stream closed).
    private func gatheredGrew() -> Bool {
        if gathered.count >= Self.gatherLimit { return flushGathered() }
        guard !isGatheredFlushScheduled else { return true }
        isGatheredFlushScheduled = true
        let work = { [self] in
            isGatheredFlushScheduled = false
            if !isClosed { _ = flushGathered(now: true) }
        }
        // After the work of this turn; the records are then written at once (`sendNow`), not
        // after what else runs at the end of the iteration.
        if let loop = scheduler as? EventLoop { loop.executeAtEndOfIteration(work) } else { scheduler.execute(work) }
        return true
    }

    /// Encrypts what was gathered and hands it to the wrapped stream (`now`: to be written at
    /// once, see `ByteStream.sendNow`). False when that failed (the stream closed).
    private func flushGathered(now: Bool = false) -> Bool {
        guard !gathered.isEmpty else { return !isClosed }
        // Taken out first: the upper layer may send again from inside `encrypt` (a close it reports).
        let plaintext = gathered
        gathered = []
        return encryptCounted(plaintext, now: now)
    }

    /// Encrypts `plaintext`, which `bufferedByteCount` counted as the ciphertext it becomes,
    /// and keeps in `sentShortfall` what it became less than that.
    private func encryptCounted(_ plaintext: [UInt8], now: Bool = false) -> Bool {
        let before = inner.sentByteCount + inner.bufferedByteCount
        guard plaintext.withUnsafeBytes({ encrypt($0, now: now) }) else { return false }
        let produced = inner.sentByteCount + inner.bufferedByteCount - before
        sentShortfall += max(0, Self.ciphertextSize(ofPlaintext: plaintext.count) - produced)
        return true
    }

    /// Sends what is queued and TLS's close_notify, then finishes the wrapped stream; the
    /// stream closes when the peer has closed its side. Before the handshake completes this
    /// happens right after it.
    public func finish() {
        guard isOpen else { return }
        isFinishing = true
        if secureSession != nil { shutDown() }
    }

    /// Closes at once, without close_notify; queued bytes are dropped.
    public func close() { close(.closedLocally) }

    /// Stops handing plaintext to `onBytes` until `resumeReading()`. The handshake goes on.
    public func pauseReading() {
        isPaused = true
        if secureSession != nil { inner.pauseReading() }
    }

    /// Hands plaintext again, first what was already decrypted or received meanwhile.
    ///
    /// The wrapped stream is read again only once what waited here is fed: a peer of small
    /// frames, whose upper layer takes one delivery and pauses again, would otherwise add a
    /// whole read to `unread` each turn and grow it without bound (attacks15y finding 1).
    public func resumeReading() {
        guard isPaused else { return }
        isPaused = false
        if !hasUnread { inner.resumeReading() }
        guard !isDeliveryScheduled else { return }
        isDeliveryScheduled = true
        scheduler.execute { [self] in
            isDeliveryScheduled = false
            feedUnread()
            advance()
            if !isClosed, !isPaused, !hasUnread { inner.resumeReading() }
        }
    }

    /// Ciphertext this stream holds that the peer sent and the upper layer has not been handed
    /// yet, decrypted or not: what waits in `unread` and in OpenSSL. Reading stops while the
    /// upper layer pauses, so this stays under one read of the wrapped stream plus one slice
    /// fed to OpenSSL, whatever the peer sends.
    var heldIncomingByteCount: Int {
        unread.count - unreadStart + Int(cssl_bio_pending(networkIn)) + Int(SSL_pending(ssl))
    }

    /// Offers the wrapped stream's ciphertext (what is gathered leaves at the turn's end).
    public func offerQueuedBytes() {
        scheduler.assertOnExecutor()
        inner.offerQueuedBytes()
    }

    /// Calls `handler` each time the wrapped stream's outbox empties with nothing waiting here.
    /// Also when the wrapped stream's outbox falls to `mark` bytes with nothing waiting here.
    /// (Bytes gathered in this turn are still to come: the wrapped stream drains again after.)
    public func whenDrained(toAtMost mark: Int, _ handler: (() -> Void)?) {
        upper.onDrained = handler
        upper.drainMark = mark
        inner.whenDrained(toAtMost: mark, handler == nil ? nil : { [weak self] in
            guard let self, !isClosed, waiting.isEmpty, gathered.isEmpty, secureSession != nil else { return }
            upper.onDrained?()
        })
    }

    // MARK: - From the wrapped stream

    /// Ciphertext from the peer (after what waits in `unread`, which comes first).
    func receive(_ bytes: [UInt8]) {
        if hasUnread {
            // Rare: the wrapped stream is paused while anything waits here.
            unread.removeSubrange(..<unreadStart)
            unread.append(contentsOf: bytes)
        } else {
            unread = bytes
        }
        unreadStart = 0
        feedUnread()
    }

    private var hasUnread: Bool { unreadStart < unread.count }

    /// Hands `unread` to OpenSSL a few records at a time, each followed by `advance`. While
    /// reading is paused after the handshake the rest waits; after the peer's close_notify
    /// nothing more is taken (a peer could otherwise grow the BIO without end). The upper
    /// layer may call back into this stream from `advance`: the position lives in
    /// `unreadStart`, never in a local copy.
    private func feedUnread() {
        while hasUnread, !isClosed {
            guard SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN == 0 else { break }
            if isPaused, secureSession != nil { return }
            ERR_clear_error()
            let end = unreadStart + min(Self.ciphertextSlice, unread.count - unreadStart)
            let written = unread[unreadStart..<end].withUnsafeBytes { BIO_write(networkIn, $0.baseAddress, Int32(clamping: $0.count)) }
            guard written > 0 else {
                fail("cannot take the peer's data (\(OpenSSL.takeErrorText() ?? "out of memory"))")
                return
            }
            unreadStart += Int(written)
            advance()
        }
        unread = []
        unreadStart = 0
    }

    /// The wrapped stream ended. An orderly end comes once what was received is read (also
    /// after a pause); a failure or reset ends this stream at once.
    func innerClosed(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        guard reason == .closedByPeer else { return close(reason) }
        innerEnd = reason
        advance()
    }

    // MARK: - The handshake and the records

    /// Moves the handshake on, hands out plaintext, and closes when the wrapped stream ended
    /// and nothing is left to read.
    private func advance() {
        guard !isClosed else { return }
        if secureSession == nil {
            guard handshake() else {
                if let innerEnd, !isClosed { endBeforeSession(innerEnd) }
                return
            }
        }
        readPlaintext()
        if let innerEnd, !isClosed, !isPaused, !hasUnread { close(innerEnd) }
    }

    /// Returns true once the handshake has completed (and the session is set).
    private func handshake() -> Bool {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        let error = SSL_get_error(ssl, result)
        if result == 1 {
            guard flushCiphertext() else { return false }
            return completeHandshake()
        }
        if error == SSL_ERROR_WANT_READ {
            _ = flushCiphertext()
            return false
        }
        fail(failureText(error))
        return false
    }

    private func completeHandshake() -> Bool {
        var selected: UnsafePointer<UInt8>?
        var selectedLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &selectedLength)
        let chosen = selected.map { Array(UnsafeBufferPointer(start: $0, count: Int(selectedLength))) } ?? []
        guard chosen == TLSContext.applicationProtocol else {
            fail(isServer ? "the client did not ask for protocol \(Self.applicationProtocol) (ALPN): it is not an svc client of protocol version 2"
                          : "the server did not choose protocol \(Self.applicationProtocol) (ALPN): it is not an svc room of protocol version 2")
            return false
        }
        guard let peerKey = verifiedPeerKey else {
            fail("the peer presented no key")
            return false
        }
        var exported = [UInt8](repeating: 0, count: 8)
        ERR_clear_error()
        let exportResult = SSL_export_keying_material(ssl, &exported, exported.count, Self.safetyCodeLabel,
                                                      Self.safetyCodeLabel.utf8.count, nil, 0, 0)
        guard exportResult == 1, let code = SecureSession.safetyCode(fromExported: exported) else {
            fail("cannot derive the safety code (\(OpenSSL.takeErrorText() ?? "no detail"))")
            return false
        }
        var roomCodeSessionID = [UInt8](repeating: 0, count: Self.roomCodeSessionIDLength)
        ERR_clear_error()
        guard SSL_export_keying_material(ssl, &roomCodeSessionID, roomCodeSessionID.count, Self.roomCodeLabel,
                                         Self.roomCodeLabel.utf8.count, nil, 0, 0) == 1 else {
            fail("cannot export the room-code exchange's session id (\(OpenSSL.takeErrorText() ?? "no detail"))")
            return false
        }
        secureSession = SecureSession(peerKey: peerKey, safetyCode: code, localKey: identity.fingerprint, roomCodeSessionID: roomCodeSessionID)
        if isPaused { inner.pauseReading() }
        if !waiting.isEmpty {
            let queued = waiting
            waiting = []
            guard encryptCounted(queued) else { return false }
        }
        if isFinishing { shutDown() }
        return !isClosed
    }

    /// Hands decrypted bytes to `onBytes` until none is left or reading pauses.
    private func readPlaintext() {
        while !isClosed, !isPaused {
            var error: Int32 = SSL_ERROR_NONE
            var failure: String?
            let available = Int(cssl_bio_pending(networkIn)) + Int(SSL_pending(ssl))
            let capacity = max(Self.recordSize, min(Self.deliveryChunk, available))
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                count = 0
                // One record at most per SSL_read_ex: gather several into one chunk.
                while count < buffer.count {
                    var read = 0
                    ERR_clear_error()
                    let result = SSL_read_ex(ssl, buffer.baseAddress! + count, buffer.count - count, &read)
                    error = SSL_get_error(ssl, result)
                    if keyUpdateFlood {
                        failure = "the peer sent TLS key updates faster than \(Self.keyUpdateBurst) at once and one every \(Self.keyUpdateInterval.secondsText) (session tickets count too); cut off"
                        break
                    }
                    guard result == 1 else {
                        // Read the error queue now: the upper layer runs before the failure is handled.
                        if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_ZERO_RETURN { failure = failureText(error) }
                        break
                    }
                    count += read
                }
            }
            if !chunk.isEmpty { upper.onBytes(chunk) }
            if isClosed { return }
            if let failure { return fail(failure) }
            switch error {
            case SSL_ERROR_WANT_READ:
                _ = flushCiphertext()
                return
            case SSL_ERROR_ZERO_RETURN:
                // close_notify: the peer sends no more; answer in kind, as `Connection` does at EOF.
                if !isFinishing {
                    isFinishing = true
                    shutDown()
                }
                return
            default:
                continue // the chunk was full
            }
        }
    }

    /// Encrypts and hands the records to the wrapped stream (`now`: see `ByteStream.sendNow`).
    private func encrypt(_ bytes: UnsafeRawBufferPointer, now: Bool = false) -> Bool {
        var offset = 0
        var records = 0
        while offset < bytes.count {
            var written = 0
            ERR_clear_error()
            let result = SSL_write_ex(ssl, bytes.baseAddress! + offset, min(bytes.count - offset, Self.recordSize), &written)
            let error = SSL_get_error(ssl, result)
            guard result == 1 else {
                fail(failureText(error))
                return false
            }
            offset += written
            records += 1
            // A few records at a time, so the BIO stays small.
            if records % Self.recordsAtOnce == 0 || offset == bytes.count {
                guard flushCiphertext(now: now) else { return false }
            }
        }
        return true
    }

    /// Sends what was gathered and close_notify, and finishes the wrapped stream.
    private func shutDown() {
        guard flushGathered() else { return }
        ERR_clear_error()
        let result = SSL_shutdown(ssl)
        _ = SSL_get_error(ssl, result)
        ERR_clear_error()
        guard flushCiphertext() else { return }
        inner.finish()
    }

    /// Moves what OpenSSL wrote into the wrapped stream. False when that stream refused
    /// (it then closed, and so did this one).
    private func flushCiphertext(now: Bool = false) -> Bool {
        let pending = Int(cssl_bio_pending(networkOut))
        guard pending > 0 else { return true }
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            count = Int(max(0, BIO_read(networkOut, buffer.baseAddress, Int32(clamping: pending))))
        }
        guard inner.isOpen else { return false }
        return (now ? bytes.withUnsafeBytes { inner.sendNow($0) } : inner.send(bytes)) && !isClosed
    }

    // MARK: - Called by the callbacks in TLSContext.swift, inside libssl calls

    /// Whether the peer's certificate (`X509 *`) is acceptable: any for the server; the
    /// policy's answer for the client.
    func acceptsPeerCertificate(_ certificate: OpaquePointer) -> Bool {
        guard let publicKey = X509_get0_pubkey(certificate), OpenSSL.isAcceptedKind(publicKey),
              let key = OpenSSL.fingerprint(ofCertificate: certificate)
        else {
            peerKeyOfOtherKind = true
            return false
        }
        guard acceptsServerKey?(key) ?? true else {
            rejectedPeerKey = key
            return false
        }
        verifiedPeerKey = key
        return true
    }

    /// A key update or a session ticket came from the peer (called inside libssl, from
    /// `noteHandshakeMessage`): each costs a key derivation, so both count against one allowance.
    func noteKeyUpdate() {
        let now = scheduler.now
        if let last = keyUpdateCounted {
            let elapsed = Double((now - last) / Self.keyUpdateInterval)
            keyUpdateAllowance = min(Double(Self.keyUpdateBurst), keyUpdateAllowance + elapsed)
        }
        keyUpdateCounted = now
        keyUpdateAllowance -= 1
        if keyUpdateAllowance < 0 { keyUpdateFlood = true }
    }

    func noteClientOfferedNoProtocol() {
        clientOfferedNoProtocol = true
    }

    // MARK: - Ending

    /// The wrapped stream ended before the handshake completed.
    private func endBeforeSession(_ reason: Connection.CloseReason) {
        switch reason {
        case .closedByPeer:
            let hint = isServer ? "" : " (it may have refused our key, or not speak TLS 1.3)"
            close(.failed(TransportError("TLS", message: "the peer closed the connection during the handshake\(hint)")))
        default:
            close(reason)
        }
    }

    /// What a failed libssl call means, in words a user understands. Reads the error queue,
    /// so call it right after the failing call.
    private func failureText(_ error: Int32) -> String {
        if let rejectedPeerKey {
            return "the server presented key \(rejectedPeerKey.full), which is not the one expected"
        }
        if peerKeyOfOtherKind {
            return "the peer's key is of a kind protocol version 2 does not use (only ECDSA P-256 and Ed25519 keys are accepted)"
        }
        if clientOfferedNoProtocol {
            return "the client did not ask for protocol \(Self.applicationProtocol) (ALPN): it is not an svc client of protocol version 2"
        }
        let reason = OpenSSL.lastReason
        let detail = OpenSSL.takeErrorText() ?? "no detail from OpenSSL (error \(error))"
        switch reason {
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE:
            return "the peer does not speak TLS 1.3 (\(detail)); it needs an update"
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_HTTP_REQUEST, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNKNOWN_PROTOCOL,
             SSL_R_RECORD_LENGTH_MISMATCH:
            return "the peer does not speak TLS (\(detail)): it may be an older svc (protocol version 1) or not svc at all"
        case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
            return "the client presented no key (certificate); members of a secure room must"
        case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
            return "the server requires our key (certificate) and did not get it"
        case SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL, SSL_R_NO_APPLICATION_PROTOCOL:
            return "the peer does not speak protocol \(Self.applicationProtocol) (ALPN): it is not an svc of protocol version 2"
        case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV1_ALERT_UNKNOWN_CA:
            return "the peer refused our key (\(detail))"
        default:
            return "the TLS handshake or a record failed (\(detail))"
        }
    }

    /// Ends with a failure: the alert OpenSSL wrote goes out, the wrapped stream finishes and
    /// is closed after `lingerAfterFailure` if the peer keeps it open.
    private func fail(_ text: String) {
        guard !isClosed else { return }
        _ = flushCiphertext()
        guard !isClosed else { return }
        // Closed first: what the wrapped stream reports from here on is no news.
        isClosed = true
        Lingering.finishThenClose(inner, scheduler: scheduler)
        report(.failed(TransportError("TLS", message: text)))
    }

    private func close(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        isClosed = true
        inner.close()
        report(reason)
    }

    /// Tells the upper layer, once; `isClosed` is already set.
    private func report(_ reason: Connection.CloseReason) {
        waiting = []
        gathered = []
        let end = upper.takeEnd()
        end(reason)
    }
}
