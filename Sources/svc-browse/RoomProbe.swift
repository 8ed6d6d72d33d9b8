import MessagingCore
import SecureTransport
import Synchronization
import TransportCore
import TransportPOSIX

/// What `--verify` does for a room (`_p2pipp._tcp`): connects, reads the server's `HELLO`,
/// says `GOODBYE` instead of its own `HELLO` and closes (docs/PROTOCOL.md, "Handshake"). That
/// proves the service speaks the protocol without joining the room: the publisher does not
/// report it and gives it no member number.
///
/// A room that announces a key (TXT `key=`) is probed over TLS with a key made for this run,
/// and must present the key it announces; one without is probed in plaintext (an older
/// publisher, or one that allows plaintext).
enum RoomProbe {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The largest frame taken before the server's `HELLO` (a `HELLO` is a few hundred bytes).
    static let frameLimit = 4096

    /// Returns once the service at `endpoints` said a valid `HELLO`; with `interface`, the
    /// connection goes through that interface only (see `TCPConnector.connect`).
    /// - Throws: `TransportError` when no address accepts a connection, `Failure` when the
    ///   service announces a malformed `key=`, presents another key, or does not say `HELLO`
    ///   within `timeout` or says something else, `SecureTransportError` when no key can be made
    ///   for the probe.
    static func check(_ endpoints: [SocketEndpoint], interface: String?, announcedKey: String?, timeout: Duration, on loop: EventLoop) async throws {
        var expected: PublicKeyFingerprint?
        if let announcedKey {
            guard let key = PublicKeyFingerprint(fullForm: announcedKey) else {
                throw Failure(description: "the service announces a key= that is not a key (SHA256: and 43 characters of base64)")
            }
            expected = key
        }
        let (socket, peer) = try await TCPConnector.connect(to: endpoints, interface: interface, timeout: timeout, on: loop)
        // Not on the loop until started: dropped when TLS cannot be set up, it closes its socket.
        let connection = Connection(socket: socket, peer: peer, loop: loop)
        let stream: any ByteStream
        if let expected {
            stream = try TLSStream(over: connection, scheduler: loop, identity: try probeIdentity(),
                                   role: .client(acceptsServerKey: { $0 == expected }))
        } else {
            stream = connection
        }
        let probe = Probe(stream, loop: loop, expected: expected)
        try await withTaskCancellationHandler {
            try await probe.run(timeout: timeout)
        } onCancel: {
            probe.end(.failure(CancellationError()))
        }
    }
}

/// The key probes present, made once per run (nobody pins a probe).
private let probeIdentities = Mutex<Identity?>(nil)

private func probeIdentity() throws -> Identity {
    try probeIdentities.withLock { identity in
        if let identity { return identity }
        let made = try Identity.ephemeral()
        identity = made
        return made
    }
}

/// One probe's connection.
///
/// - Important: every field is used on `loop` only; `run` and `end` hand their work over to it.
private final class Probe: @unchecked Sendable {
    private let connection: any ByteStream
    private let loop: EventLoop
    /// The key the service announces, which it must present (nil: a plaintext probe).
    private let expected: PublicKeyFingerprint?
    private var decoder = FrameDecoder(maximumPayload: RoomProbe.frameLimit)
    private var continuation: CheckedContinuation<Void, any Error>?
    private var outcome: Result<Void, any Error>?

    init(_ connection: any ByteStream, loop: EventLoop, expected: PublicKeyFingerprint?) {
        self.connection = connection
        self.loop = loop
        self.expected = expected
    }

    func run(timeout: Duration) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.execute { [self] in
                connection.start(onBytes: { [self] in received($0) }, onClose: { [self] reason in
                    if let presented = connection.rejectedPeerKey, let expected {
                        return finish(.failure(RoomProbe.Failure(description: "the service presented the key \(presented.full), not the one it announces, \(expected.full): someone may be answering in its place")))
                    }
                    finish(.failure(RoomProbe.Failure(description: "the connection was \(reason) before the service said HELLO")))
                })
                if let outcome { // cancelled before it started
                    connection.close()
                    return continuation.resume(with: outcome)
                }
                self.continuation = continuation
                loop.schedule(after: timeout) { [self] in
                    finish(.failure(RoomProbe.Failure(description: "no HELLO within \(timeout.secondsText)")))
                }
            }
        }
    }

    /// Ends the probe from any thread.
    func end(_ result: Result<Void, any Error>) {
        loop.execute { [self] in finish(result) }
    }

    private func received(_ bytes: [UInt8]) {
        loop.assertOnExecutor()
        decoder.feed(bytes)
        do throws(ProtocolError) {
            guard let frame = try decoder.next() else { return }
            guard case .hello(let hello) = try Message(decoding: frame) else {
                return finish(.failure(RoomProbe.Failure(description: "the service's first frame is not HELLO")))
            }
            guard hello.version == Message.Hello.currentVersion else {
                return finish(.failure(RoomProbe.Failure(description: "the service speaks protocol version \(hello.version), not \(Message.Hello.currentVersion)")))
            }
            finish(.success(()))
        } catch {
            finish(.failure(RoomProbe.Failure(description: "the service does not speak the room protocol: \(error.message)")))
        }
    }

    /// Resumes the waiting task once. On success the probe says GOODBYE and closes in an
    /// orderly way (a server that never closes its side is cut off after 2 s); otherwise it
    /// closes at once.
    private func finish(_ result: Result<Void, any Error>) {
        loop.assertOnExecutor()
        guard outcome == nil else { return }
        outcome = result
        guard let continuation else { return } // not started yet: `run` closes it
        if case .success = result, !connection.isClosed {
            var bytes: [UInt8] = []
            if Message.goodbye(reason: "svc-browse --verify").encode(into: &bytes) { connection.send(bytes) }
            connection.finish()
            loop.schedule(after: .seconds(2)) { [connection] in connection.close() }
        } else {
            connection.close()
        }
        continuation.resume(with: result)
        self.continuation = nil
    }
}
