// Fuzz target `secure-link`: the publisher's side of a connection before and after it knows
// what the client speaks. A NegotiatingServerStream (server identity made once per process)
// sits on one end of an in-memory stream pair with a manual clock; on the other end the
// fuzzer first writes raw bytes as it likes (0x16 chooses TLS, anything else plaintext, which
// is allowed or refused), and may start either a real TLS client (a TLSStream client with its
// own identity, whose policy accepts or refuses the server's key) or a raw reader. Each end
// has an upper layer that sends and reads numbered bytes (a pattern of the sender and the
// offset, so that lost, repeated, reordered or foreign bytes show).
//   setup byte: bit 0 plaintext allowed; the delivery chunk of both ends 1 << ((b >> 1) % 17)
//   then operations, one byte `kind (4 bits, mod 12) | side << 4 | argument << 5 | hold << 7`
//   (side 0 the client, 1 the server; unless hold is set, the queued work runs after the
//   operation):
//   0 raw bytes: the client end writes them toward the server (its first bytes, or, once a
//     TLS client runs, bytes between its records); the server side injects them into the
//     stream toward the client (bypassing the server: corrupt records). Argument: 0 b bytes,
//     1 a 2-byte count, 2 a TLS record (content type b, version 0x0303, a 2-byte length up to
//     2^14 + 2048, past the TLS 1.3 limit), 3 a 3-byte count up to 4 MiB + 1 (past the
//     outbox); the bytes come from the input (zeros past its end)
//   1 the client end starts: client side a TLS client (argument bit 0 set: its policy
//     refuses the server's key), server side a raw reader; only the first start counts
//   2 the side's upper layer sends n bytes: argument 0 b, 1 a 2-byte count, 2 a 3-byte count
//     up to 4 MiB + 64 KiB, 3 a boundary (0, 1, 2^14 ± 1, 2^14, 64 KiB ± 1, 64 KiB,
//     4 MiB − 16 KiB, 4 MiB ± 1, 4 MiB: the record size, the delivery chunk, the
//     pre-handshake and outbox bound); at most 16 MiB per input, raw bytes included (a byte
//     counts 256 / chunk times while a delivery chunk is below 256); later sends are skipped
//   3 / 4 the side stops / resumes reading (the client end only as a raw reader: a TLS
//     client must find its end reading)
//   5 / 6 the side finishes / closes
//   7 the delivery chunk of what the side writes: 1 << (b % 17), 1 byte to 64 KiB
//   8 the clock moves on by b × 100 ms (failures linger 2 s)
//   9 the side's next onBytes reacts (argument 0 sends b × 128 bytes, 1 finishes, 2 closes,
//     3 stops reading), inside the callback
//   10 at most b queued work items run (a state in the middle of a delivery)
//   11 the side's upper layer sets (argument even) or removes a whenDrained handler
//   At the end reactions are called off, every reader resumes and the work runs out; then
//   both sides close and the clock passes the linger. Replayed with SVC_FUZZ_TRACE=1, it
//   says what happened.
// Checked: nothing traps; the server writes nothing before the client's first byte, then
// exactly the refusal, or the upper layer's bytes unchanged (plaintext); the decision never
// changes; each onClose is called at most once (exactly once at the end), with the stream
// closed, and after it no onBytes, no whenDrained, and send is refused; no onBytes while
// reading is paused; what each upper layer receives is a prefix of what the other sent, in
// order, whatever was injected (TLS must reject corrupt records, not deliver them), and the
// server's upper layer gets plaintext only after its handshake completed and never from a
// client that refused the server's key; the server sees the client's key and the client the
// server's (asked once), and both sessions have the same safety code; when nothing was
// injected, nobody finished or closed and every send was accepted, the link is still open
// at the end and everything sent has arrived (TLS and plaintext); at the end both in-memory
// ends are closed. Bounds: a stream's bufferedByteCount stays at most 8 MiB (the 4 MiB
// pre-handshake queue plus the wrapped stream's 4 MiB outbox), an in-memory outbox at most
// 4 MiB; the heap (with ASan) at most 48 MiB above the input's start: four 4 MiB buffers
// (a queue and an outbox on each side), each with up to twice its size in capacity as
// arrays grow, plus the checker's two copies of bytes in flight (4 MiB each, same growth).
import Glibc
import MessagingCore
import MessagingTesting
import SecureTransport
import TransportCore
import TransportPOSIX

/// The server's and the client's identity, made once: a key per input would be most of the run.
let identities: (server: Identity, client: Identity) = {
    do {
        return (try Identity.ephemeral(), try Identity.ephemeral())
    } catch {
        preconditionFailure("cannot make the fuzz identities: \(error)")
    }
}()

/// What a room that requires TLS answers a plaintext client (as svc-publish builds it).
let refusal = Message.error(code: ProtocolError.Code.tlsRequired.rawValue, message: "this room requires TLS 1.3").frame.encoded

/// The outbox and pre-handshake bound of every stream here (the default, as `Connection`).
let limit = 4 << 20
let sendSizes = [0, 1, 16_383, 16_384, 16_385, 65_535, 65_536, 65_537, limit - 16_384, limit - 1, limit, limit + 1]
/// The most bytes the upper layers send and the fuzzer writes in one input, at deliveries of
/// 256 bytes or more (time, not memory; see `SecureLink.charge`).
let sendBudget = 16 << 20
let heapBound = 48 << 20

/// Byte `offset` of the stream an upper layer sends: the high byte of a multiplicative hash,
/// so that no short run repeats and the two directions (seeds far apart) never agree.
@inline(__always)
func patternByte(_ seed: UInt64, _ offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: ((seed &+ UInt64(offset)) &* 0x9E37_79B9_7F4A_7C15) >> 56)
}

func pattern(_ seed: UInt64, from offset: Int, count: Int) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count { buffer[index] = patternByte(seed, offset + index) }
        initialized = count
    }
}

func matchesPattern(_ bytes: [UInt8], _ seed: UInt64, from offset: Int) -> Bool {
    bytes.withUnsafeBufferPointer { buffer in
        for index in buffer.indices where buffer[index] != patternByte(seed, offset + index) { return false }
        return true
    }
}

/// Bytes written and not yet read back: what arrives must be the front, in order.
final class ByteQueue {
    private var bytes: [UInt8] = []
    private var start = 0

    var count: Int { bytes.count - start }

    func append(_ more: [UInt8]) { bytes.append(contentsOf: more) }

    /// Whether `arrived` is the front; it is removed when it is.
    func take(_ arrived: [UInt8]) -> Bool {
        guard arrived.count <= count, bytes[start..<(start + arrived.count)].elementsEqual(arrived) else { return false }
        start += arrived.count
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 16_384)
            start = 0
        } else if start > 1 << 20 {
            bytes.removeFirst(start)
            start = 0
        }
        return true
    }
}

/// The layer above one side's stream (a room, a member): numbered bytes out, checks on what comes in.
final class Upper {
    enum Reaction { case send(Int), finish, close, pause }

    let name: String
    let seed: UInt64
    var stream: (any ByteStream)?
    /// Bytes handed to `send` (also those of a refused send: part of it may have gone out).
    var sent = 0
    var received = 0
    var closes = 0
    var closeReason: Connection.CloseReason?
    var isPaused = false
    var sendFailed = false
    var reaction: Reaction?

    init(_ name: String, seed: UInt64) {
        self.name = name
        self.seed = seed
    }
}

/// One input's world: the server on one in-memory end, the fuzzer, a TLS client or a raw reader on the other.
final class SecureLink {
    let scheduler = ManualScheduler()
    let clientEnd: InMemoryStream
    let serverEnd: InMemoryStream
    let server: NegotiatingServerStream
    let serverUpper = Upper("server", seed: 0)
    let clientUpper = Upper("client", seed: 1 << 40)
    var client: TLSStream?
    var clientEndStarted = false
    var rawReader = false
    var rawReceived = 0
    var rawCloses = 0
    var rawPaused = false
    var rawSendFailed = false
    var acceptsServerKey = true
    var policyCalls = 0
    /// What the client end wrote, while the server's upper layer may get it as plaintext.
    var clientWire: ByteQueue? = ByteQueue()
    /// What went toward the client end, while a raw reader may get it.
    var serverWire: ByteQueue? = ByteQueue()
    /// Bytes the server itself wrote (not injected ones).
    var serverWrote = 0
    var clientWroteRaw = false
    var injectedTowardClient = false
    /// Whether the fuzzer finished or closed that side.
    var clientEnded = false
    var serverEnded = false
    var budget = sendBudget
    var decision: NegotiatingServerStream.Decision?
    var serverSession: SecureSession?
    var clientSession: SecureSession?

    init(allowsPlaintext: Bool, deliveryChunk: Int) {
        (clientEnd, serverEnd) = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: deliveryChunk)
        server = NegotiatingServerStream(over: serverEnd, scheduler: scheduler, identity: identities.server,
                                         allowsPlaintext: allowsPlaintext, refusal: refusal)
        serverEnd.tap = { [unowned self] bytes in serverWrote(bytes) }
        clientEnd.tap = { [unowned self] bytes in clientWire?.append(bytes) }
        start(serverUpper, on: server) { [unowned self] bytes in serverReceived(bytes) }
    }

    // MARK: - The upper layers

    func start(_ upper: Upper, on stream: any ByteStream, checking: @escaping ([UInt8]) -> Void) {
        upper.stream = stream
        stream.start(onBytes: { [unowned self, unowned upper] bytes in
            precondition(upper.closes == 0, "the \(upper.name) got \(bytes.count) bytes after its stream closed (\(String(describing: upper.closeReason)))")
            precondition(!upper.isPaused, "the \(upper.name) got \(bytes.count) bytes while it had stopped reading")
            checking(bytes)
            upper.received += bytes.count
            react(upper)
        }, onClose: { [unowned upper] reason in
            upper.closes += 1
            precondition(upper.closes == 1, "the \(upper.name)'s stream closed again (\(reason), after \(String(describing: upper.closeReason)))")
            upper.closeReason = reason
            guard let stream = upper.stream else { return }
            precondition(stream.isClosed && !stream.isOpen, "the \(upper.name)'s stream reported its close (\(reason)) but is not closed")
            precondition(!stream.send([0x42]), "the \(upper.name)'s stream took bytes after its close")
            stream.finish()
            stream.close() // no second onClose
        })
    }

    func react(_ upper: Upper) {
        guard let reaction = upper.reaction else { return }
        upper.reaction = nil
        switch reaction {
        case .send(let count): send(count, from: upper)
        case .finish: end(upper, closing: false)
        case .close: end(upper, closing: true)
        case .pause: pause(upper)
        }
    }

    func send(_ count: Int, from upper: Upper) {
        guard let stream = upper.stream, charge(count) else { return }
        let bytes = pattern(upper.seed, from: upper.sent, count: count)
        let wasClosed = upper.closes > 0
        upper.sent += count
        if !stream.send(bytes) {
            upper.sendFailed = true
        } else {
            precondition(!wasClosed, "the \(upper.name)'s stream took \(count) bytes after its close")
        }
    }

    /// Whether `count` more bytes fit the input's budget (taken from it when they do). Below
    /// 256-byte deliveries each byte costs more: 4 MiB read a byte at a time takes seconds.
    func charge(_ count: Int) -> Bool {
        let cost = count * max(1, 256 / min(clientEnd.deliveryChunk, serverEnd.deliveryChunk))
        guard cost <= budget else { return false }
        budget -= cost
        return true
    }

    func end(_ upper: Upper, closing: Bool) {
        guard let stream = upper.stream else { return }
        if upper === serverUpper { serverEnded = true } else { clientEnded = true }
        if closing { stream.close() } else { stream.finish() }
    }

    func pause(_ upper: Upper) {
        upper.isPaused = true
        upper.stream?.pauseReading()
    }

    func resume(_ upper: Upper) {
        upper.isPaused = false
        upper.stream?.resumeReading()
    }

    // MARK: - What arrives

    /// Plaintext at the server's upper layer.
    func serverReceived(_ bytes: [UInt8]) {
        switch server.decision {
        case .plaintext?:
            guard let clientWire else { preconditionFailure("the server's upper layer got plaintext after its close") }
            precondition(clientWire.take(bytes), "the server passed on \(bytes.count) bytes the client never wrote, or out of order")
        case .tls?:
            precondition(server.secureSession != nil, "the server handed on \(bytes.count) bytes before its handshake completed")
            precondition(policyCalls == 0 || acceptsServerKey, "the server got \(bytes.count) bytes from a client that refused its key")
            precondition(serverUpper.received + bytes.count <= clientUpper.sent && matchesPattern(bytes, clientUpper.seed, from: serverUpper.received),
                         "the server got \(bytes.count) bytes at \(serverUpper.received) that the client did not send there (it sent \(clientUpper.sent))")
        case .refused?, nil:
            preconditionFailure("the server's upper layer got \(bytes.count) bytes with decision \(String(describing: server.decision))")
        }
    }

    /// Plaintext at the TLS client's upper layer.
    func clientReceived(_ bytes: [UInt8]) {
        precondition(server.decision == .tls && client?.secureSession != nil,
                     "the client got \(bytes.count) bytes without a handshake (decision \(String(describing: server.decision)))")
        precondition(clientUpper.received + bytes.count <= serverUpper.sent && matchesPattern(bytes, serverUpper.seed, from: clientUpper.received),
                     "the client got \(bytes.count) bytes at \(clientUpper.received) that the server did not send there (it sent \(serverUpper.sent))")
    }

    /// Everything the server writes into its end (not what the fuzzer injects).
    func serverWrote(_ bytes: [UInt8]) {
        switch server.decision {
        case nil:
            preconditionFailure("the server wrote \(bytes.count) bytes before the client's first byte")
        case .refused?:
            precondition(serverWrote + bytes.count <= refusal.count && refusal[serverWrote..<(serverWrote + bytes.count)].elementsEqual(bytes),
                         "the server wrote \(bytes.count) bytes at \(serverWrote) that are not the refusal")
        case .plaintext?:
            precondition(serverWrote + bytes.count <= serverUpper.sent && matchesPattern(bytes, serverUpper.seed, from: serverWrote),
                         "in plaintext the server wrote \(bytes.count) bytes at \(serverWrote) that its upper layer did not send there")
        case .tls?:
            break // ciphertext
        }
        serverWrote += bytes.count
        serverWire?.append(bytes)
    }

    // MARK: - The client end

    func startTLSClient(refusing: Bool) {
        guard !clientEndStarted, !clientEnd.isClosed else { return }
        clientEndStarted = true
        acceptsServerKey = !refusing
        let tls: TLSStream
        do {
            tls = try TLSStream(over: clientEnd, scheduler: scheduler, identity: identities.client,
                                role: .client(acceptsServerKey: { [unowned self] key in
                                    policyCalls += 1
                                    precondition(policyCalls == 1, "the client was asked about the server's key again")
                                    precondition(key == identities.server.fingerprint, "the client saw key \(key), not the server's")
                                    return acceptsServerKey
                                }))
        } catch {
            preconditionFailure("cannot make a TLS client: \(error)")
        }
        client = tls
        serverWire = nil // the TLS client reads it now
        start(clientUpper, on: tls) { [unowned self] bytes in clientReceived(bytes) }
    }

    func startRawReader() {
        guard !clientEndStarted, !clientEnd.isClosed else { return }
        clientEndStarted = true
        rawReader = true
        clientEnd.start(onBytes: { [unowned self] bytes in
            precondition(rawCloses == 0, "the raw reader got bytes after its end closed")
            precondition(!rawPaused, "the raw reader got bytes while it had stopped reading")
            rawReceived += bytes.count
            if let serverWire {
                precondition(serverWire.take(bytes), "the client end got \(bytes.count) bytes nobody wrote toward it, or out of order")
            }
        }, onClose: { [unowned self] _ in
            rawCloses += 1
            precondition(rawCloses == 1, "the raw reader's end closed again")
        })
    }

    /// The client side's upper layer, when a TLS client runs.
    var clientSide: Upper? { client == nil ? nil : clientUpper }

    func raw(_ bytes: [UInt8], fromClient: Bool) {
        if fromClient {
            clientWroteRaw = true
            if !clientEnd.send(bytes) { rawSendFailed = true }
        } else {
            injectedTowardClient = true
            serverWire?.append(bytes)
            _ = serverEnd.inject(bytes)
        }
    }

    // MARK: - Invariants

    func check(baseline: Int?) {
        if let decision {
            precondition(server.decision == decision, "the decision changed from \(decision) to \(String(describing: server.decision))")
        } else {
            decision = server.decision
        }
        precondition(server.isPlaintext == (server.decision == .plaintext), "isPlaintext disagrees with the decision")
        if let decision = server.decision, decision != .plaintext { clientWire = nil }
        if serverUpper.closes > 0 { clientWire = nil }
        if rawCloses > 0 || clientEnd.isClosed { serverWire = nil }

        if let session = server.secureSession {
            precondition(server.decision == .tls, "a server session without TLS")
            precondition(session.peerKey == identities.client.fingerprint, "the server saw key \(session.peerKey), not the client's")
            precondition(serverSession == nil || serverSession == session, "the server's session changed")
            precondition(client?.secureSession != nil, "the server completed a handshake the client did not")
            serverSession = session
        } else {
            precondition(serverSession == nil, "the server's session went away")
        }
        if let client, let session = client.secureSession {
            precondition(session.peerKey == identities.server.fingerprint, "the client saw key \(session.peerKey), not the server's")
            precondition(acceptsServerKey && policyCalls == 1, "the client completed a handshake without accepting the server's key")
            precondition(clientSession == nil || clientSession == session, "the client's session changed")
            clientSession = session
            if let serverSession {
                precondition(serverSession.safetyCode == session.safetyCode,
                             "safety codes differ: server \(serverSession.safetyCode), client \(session.safetyCode)")
            }
        } else {
            precondition(clientSession == nil, "the client's session went away")
        }
        if let rejected = client?.rejectedPeerKey {
            precondition(rejected == identities.server.fingerprint && !acceptsServerKey && client?.secureSession == nil,
                         "the client reports refusing \(rejected) (policy accepts: \(acceptsServerKey))")
        }

        precondition(server.bufferedByteCount <= 2 * limit, "the server holds \(server.bufferedByteCount) bytes")
        if let client { precondition(client.bufferedByteCount <= 2 * limit, "the client holds \(client.bufferedByteCount) bytes") }
        precondition(clientEnd.peakBufferedByteCount <= limit && serverEnd.peakBufferedByteCount <= limit,
                     "an in-memory outbox held \(max(clientEnd.peakBufferedByteCount, serverEnd.peakBufferedByteCount)) bytes")
        if let baseline, let now = FuzzDriver.allocatedBytes() {
            precondition(now - baseline <= heapBound, "the heap grew by \(now - baseline) bytes")
        }
    }

    /// Everyone reads again and the work runs out; an undisturbed link must then be whole.
    func drain() {
        for upper in [serverUpper, clientUpper] {
            upper.reaction = nil // a reaction still armed would stop reading again
            if upper.isPaused && upper.closes == 0 { resume(upper) }
        }
        if rawReader, rawPaused {
            rawPaused = false
            clientEnd.resumeReading()
        }
        scheduler.run()
        let undisturbed = !injectedTowardClient && !clientEnded && !serverEnded && !serverUpper.sendFailed && !clientUpper.sendFailed
        if undisturbed, server.decision == .tls, let client, !clientWroteRaw, acceptsServerKey {
            precondition(serverUpper.closes == 0 && clientUpper.closes == 0,
                         "an undisturbed TLS link closed: server \(String(describing: serverUpper.closeReason)), client \(String(describing: clientUpper.closeReason))")
            precondition(server.secureSession != nil && client.secureSession != nil, "an undisturbed TLS handshake did not complete")
            precondition(serverUpper.received == clientUpper.sent && clientUpper.received == serverUpper.sent,
                         "bytes were lost: the server got \(serverUpper.received) of \(clientUpper.sent), the client \(clientUpper.received) of \(serverUpper.sent)")
        }
        if undisturbed, server.decision == .plaintext, rawReader, !rawSendFailed {
            precondition(serverUpper.closes == 0 && rawCloses == 0,
                         "an undisturbed plaintext link closed: server \(String(describing: serverUpper.closeReason))")
            precondition(clientWire?.count == 0 && serverWire?.count == 0,
                         "plaintext was lost: \(clientWire?.count ?? -1) bytes toward the server, \(serverWire?.count ?? -1) toward the client")
        }
    }

    /// What happened, for a person replaying an input (SVC_FUZZ_TRACE=1).
    func trace() {
        func reason(_ upper: Upper) -> String { upper.closeReason.map { "\($0)" } ?? "open" }
        let refused = client?.rejectedPeerKey == nil ? "" : " (it refused the server's key)"
        print("decision \(server.decision.map { "\($0)" } ?? "none"); safety codes: server \(server.secureSession?.safetyCode ?? "none"), "
            + "client \(client?.secureSession?.safetyCode ?? "none")\(refused)")
        print("server: sent \(serverUpper.sent), received \(serverUpper.received), \(reason(serverUpper)); wrote \(serverWrote) bytes")
        if client != nil {
            print("client: sent \(clientUpper.sent), received \(clientUpper.received), \(reason(clientUpper))")
        } else {
            print("client: \(rawReader ? "a raw reader, received \(rawReceived)" : "its end never started")")
        }
    }

    /// Both sides close; after the linger nothing may be left open.
    func closeAll() {
        server.close()
        if let client { client.close() } else { clientEnd.close() }
        scheduler.run()
        scheduler.advance(by: TLSStream.lingerAfterFailure + .seconds(1))
        precondition(serverUpper.closes == 1, "the server's onClose was called \(serverUpper.closes) times")
        if client != nil { precondition(clientUpper.closes == 1, "the client's onClose was called \(clientUpper.closes) times") }
        if rawReader { precondition(rawCloses == 1, "the raw reader's onClose was called \(rawCloses) times") }
        precondition(clientEnd.isClosed && serverEnd.isClosed, "an in-memory end is still open after both sides closed and the linger passed")
    }
}

func sendSize(_ argument: Int, _ input: inout FuzzInput) -> Int {
    switch argument {
    case 0: Int(input.byte())
    case 1: Int(input.integer(bytes: 2))
    case 2: Int(input.integer(bytes: 3)) % (limit + 65_537)
    default: sendSizes[Int(input.byte()) % sendSizes.count]
    }
}

func rawBytes(_ argument: Int, _ input: inout FuzzInput) -> [UInt8] {
    switch argument {
    case 0: return input.take(Int(input.byte()))
    case 1: return input.take(Int(input.integer(bytes: 2)))
    case 2:
        let type = input.byte()
        let length = Int(input.integer(bytes: 2)) % (16_384 + 2_048 + 1)
        return [type, 3, 3, UInt8(length >> 8), UInt8(length & 0xFF)] + input.take(length)
    default: return input.take(Int(input.integer(bytes: 3)) % (limit + 2))
    }
}

func fuzzSecureLink(_ bytes: UnsafeRawBufferPointer) {
    let baseline = FuzzDriver.allocatedBytes()
    var input = FuzzInput(bytes)
    let setup = input.byte()
    let link = SecureLink(allowsPlaintext: setup & 1 == 1, deliveryChunk: 1 << (Int(setup >> 1) % 17))
    link.check(baseline: baseline)
    while !input.isAtEnd {
        let op = input.byte()
        let fromClient = op & 0x10 == 0
        let upper = fromClient ? link.clientSide : link.serverUpper
        let argument = Int(op >> 5) & 3
        var runs = op & 0x80 == 0
        switch Int(op & 0x0F) % 12 {
        case 0:
            let raw = rawBytes(argument, &input)
            if link.charge(raw.count) { link.raw(raw, fromClient: fromClient) }
        case 1:
            if fromClient { link.startTLSClient(refusing: argument & 1 == 1) } else { link.startRawReader() }
        case 2:
            let count = sendSize(argument, &input)
            if let upper { link.send(count, from: upper) }
        case 3:
            // The client end pauses only as a raw reader: a TLS client must find it reading.
            if let upper { link.pause(upper) } else if fromClient, link.rawReader {
                link.rawPaused = true
                link.clientEnd.pauseReading()
            }
        case 4:
            if let upper { link.resume(upper) } else if fromClient, link.rawReader {
                link.rawPaused = false
                link.clientEnd.resumeReading()
            }
        case 5, 6:
            let closing = op & 0x0F == 6
            if let upper { link.end(upper, closing: closing) } else if fromClient {
                link.clientEnded = true
                if closing { link.clientEnd.close() } else { link.clientEnd.finish() }
            }
        case 7:
            (fromClient ? link.clientEnd : link.serverEnd).deliveryChunk = 1 << (Int(input.byte()) % 17)
        case 8:
            link.scheduler.advance(by: .milliseconds(100 * Int(input.byte())))
        case 9:
            let reaction: Upper.Reaction = switch argument {
            case 0: .send(Int(input.byte()) << 7)
            case 1: .finish
            case 2: .close
            default: .pause
            }
            upper?.reaction = reaction
        case 10:
            link.scheduler.run(atMost: Int(input.byte()))
            runs = false
        default:
            if let upper, let stream = upper.stream {
                stream.whenDrained(argument & 1 == 1 ? nil : { [unowned upper] in
                    precondition(upper.closes == 0, "the \(upper.name)'s whenDrained handler ran after its stream closed")
                })
            }
        }
        if runs { link.scheduler.run() }
        link.check(baseline: baseline)
    }
    link.drain()
    link.check(baseline: baseline)
    if getenv("SVC_FUZZ_TRACE") != nil { link.trace() }
    link.closeAll()
}

@main
enum SecureLinkFuzz {
    static func main() { FuzzDriver.main(fuzzSecureLink) }
}
