import Dispatch
import MessagingCore
import TransportCore
import TransportPOSIX

/// A framed connection to one peer: frames in and out, `PING`s answered, protocol violations
/// answered with `ERROR` frames, and the peer's liveness (handshake deadline, heartbeats)
/// watched.
///
/// - Important: every method runs on the scheduler's executor (for a `Connection`, its
///   queue), and so do the handlers. The link keeps itself alive until it ends.
public final class PeerLink {
    /// Why a link ended.
    public enum EndReason: Sendable, Hashable, CustomStringConvertible {
        /// The transport closed or failed.
        case transport(Connection.CloseReason)
        /// The peer broke the protocol; we sent it this error.
        case violation(ProtocolError)
        /// The peer sent an `ERROR` that ends the connection.
        case peerError(code: UInt16, message: String)
        /// The peer said `GOODBYE` and closed.
        case goodbye(String)

        public var description: String {
            switch self {
            case .transport(let reason): "connection \(reason)"
            case .violation(let error) where error.code == .heartbeatTimeout: "stopped answering: \(error.message)"
            case .violation(let error): error.description
            case .peerError(let code, let message):
                "the peer reported \(ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"): \(message)"
            case .goodbye(let reason): reason.isEmpty ? "said goodbye" : "said goodbye: \(reason)"
            }
        }

        /// Whether the peer went away in an orderly way.
        public var isOrderly: Bool {
            switch self {
            case .goodbye, .transport(.closedByPeer), .transport(.closedLocally): true
            default: false
            }
        }
    }

    /// The largest frame payload a peer may send before its handshake completed: a HELLO
    /// needs a few hundred bytes, so a connection that never says HELLO costs at most this.
    public static let handshakeFrameLimit = 4096

    /// The byte stream under the link (a TCP `Connection`, or an in-memory one in tests).
    public let connection: any ByteStream
    /// Where the link's timers run and what time it is for them.
    public let scheduler: any Scheduler
    private var decoder: FrameDecoder
    private let timerLeeway: Duration
    private var liveness: Liveness
    private var timer: (any ScheduledWork)?
    /// The grace after which a finishing link is cut off; set once.
    private var closing: (any ScheduledWork)?
    /// A server-side link whose peer has not completed its handshake: it must say HELLO
    /// first, so anything else (a PING, a frame it cannot decode) ends the link.
    private var awaitingHandshake: Bool
    /// Whether PING is answered here (and PONG dropped). When false, both go to `onMessage`,
    /// which decides: a member checking a room code answers nothing until the room proved it.
    public var answersPings = true
    /// Whether the peer counts as heard from while reading is held for the consumer
    /// (`ReadHold.consumer`): its silence is ours then. A room whose consumer stopped for too
    /// long sets it false, so the heartbeat drops the peers it no longer reads
    /// (`RoomServer.events`).
    public var heldForConsumerCountsAsHeard = true
    /// Why reading is paused now; reading resumes when none is left.
    private var readingHeld = ReadHolds()
    /// Called after each `send`, `send(contentsOf:)` and `sendFileChunk` the connection took
    /// (answers to pings, acknowledgements, errors, relayed file data...; not bytes written to
    /// `connection` directly): a room adds up all its members' outboxes
    /// (`RoomServer.queued(for:)`), whatever put the bytes there.
    var onQueued: (() -> Void)?
    /// The frames handled in one turn at most: a peer that sends thousands of small frames (or
    /// large ones) in one read waits for the others' turns in between (the rest stays in the decoder, and
    /// nothing more is read meanwhile), so one member cannot hold the room's queue.
    public static let framesPerTurn = 64
    /// ... and at most this many payload bytes (64 maximum-size TEXTs would be 4 MiB of relaying).
    public static let bytesPerTurn = 256 << 10

    /// Why a link stops reading for a while.
    public enum ReadHold: Hashable, Sendable {
        /// Received file data waits for the disk.
        case disk
        /// The frames already received wait for their turn.
        case turn
        /// The consumer of the events these frames make is behind (`RoomClient.events`).
        case consumer
    }
    /// Frames left in the decoder when a hold stopped handling them; handled on release.
    private var framesWaiting = false
    /// Who is told when the outbox empties (see `whenDrained(_:_:)`).
    private var drainHandlers: [DrainWaiter: () -> Void] = [:]

    /// Who waits for the outbox to empty: several may at once.
    public enum DrainWaiter: Hashable, Sendable {
        /// A file this side sends (`FileTransfers`).
        case files
        /// Relayed data waits for room in this peer's outbox (`FileRelay`).
        case relay
        /// Lines wait for room in this peer's outbox (`RoomClient.send`, `RoomServer.send`).
        case sender
    }
    /// The capabilities of the first HELLO this side sent and of the first it received.
    private var sentCapabilities: Message.Capabilities?
    private var receivedCapabilities: Message.Capabilities?
    private var goodbyeReason: String?
    private var violation: ProtocolError?
    private var peerError: (UInt16, String)?
    private var onMessage: (Message) -> Void = { _ in }
    private var onEnd: (EndReason) -> Void = { _ in }

    /// - Parameters:
    ///   - handshakeTimeout: how long the peer has to complete the handshake (see
    ///     `handshakeCompleted`), or nil for no limit.
    ///   - heartbeatInterval: silence after which to `PING`; after `allowedMisses` unanswered
    ///     pings the link ends with `heartbeat-timeout`.
    public convenience init(_ connection: Connection, handshakeTimeout: Duration?, heartbeatInterval: Duration, allowedMisses: Int = 3) {
        self.init(connection, scheduler: connection.loop, handshakeTimeout: handshakeTimeout,
                  heartbeatInterval: heartbeatInterval, allowedMisses: allowedMisses)
    }

    /// A link over any byte stream, with its timers on `scheduler`.
    /// - Parameters:
    ///   - connection: the stream; its handlers must run on `scheduler`'s executor.
    ///   - scheduler: runs the heartbeat, the handshake deadline and the closing grace.
    ///   - handshakeTimeout: how long the peer has to complete the handshake, or nil.
    ///   - heartbeatInterval: silence after which to `PING`.
    ///   - allowedMisses: unanswered pings after which the link ends.
    public init(_ connection: any ByteStream, scheduler: any Scheduler, handshakeTimeout: Duration?, heartbeatInterval: Duration,
                allowedMisses: Int = 3) {
        self.connection = connection
        decoder = FrameDecoder(maximumPayload: handshakeTimeout == nil ? Frame.maximumPayload : PeerLink.handshakeFrameLimit)
        awaitingHandshake = handshakeTimeout != nil
        self.scheduler = scheduler
        liveness = Liveness(now: scheduler.now, handshakeTimeout: handshakeTimeout, heartbeatInterval: heartbeatInterval,
                            allowedMisses: allowedMisses)
        // Heartbeats need no precision: a tenth of the interval lets libdispatch fire the
        // timers of many links together, one thread wake-up for many (1,000 idle members).
        timerLeeway = min(max(heartbeatInterval / 10, .milliseconds(1)), .seconds(1))
    }

    /// Starts reading. `onMessage` gets every message except `PING`/`PONG`; `onEnd` is
    /// called once.
    public func start(onMessage: @escaping (Message) -> Void, onEnd: @escaping (EndReason) -> Void) {
        scheduler.assertOnExecutor()
        self.onMessage = onMessage
        self.onEnd = onEnd
        connection.start(onBytes: { [self] bytes in received(bytes) }, onClose: { [self] reason in ended(reason) })
        scheduleTimer()
    }

    public var isOpen: Bool { connection.isOpen }

    /// Whether both sides advertised `.memberKeys` in their HELLO: PRESENCE is then sent and
    /// received with keys (`Message.presenceWithKeys`).
    public var usesMemberKeys: Bool {
        sentCapabilities?.contains(.memberKeys) == true && receivedCapabilities?.contains(.memberKeys) == true
    }

    /// Whether both sides advertised `.streamedFiles` in their HELLO: offers then carry a
    /// resume tag, and `FILE_END` the file's SHA-256.
    public var usesStreamedFiles: Bool {
        sentCapabilities?.contains(.streamedFiles) == true && receivedCapabilities?.contains(.streamedFiles) == true
    }

    /// Sends a message. Returns false when the connection cannot take it.
    @discardableResult
    public func send(_ message: Message) -> Bool {
        scheduler.assertOnExecutor()
        noteSent(message)
        // Encoded straight into the connection's outbox: no buffer of ours, no copy.
        return queued(connection.send { buffer in message.encode(into: &buffer) })
    }

    /// Sends messages in order, encoded into the outbox in one go: for many small messages to
    /// one peer (a room's history for a member who joined, a load generator), one call into the
    /// connection instead of one a message. Returns false when the connection cannot take them.
    @discardableResult
    public func send(contentsOf messages: [Message]) -> Bool {
        scheduler.assertOnExecutor()
        for message in messages { noteSent(message) }
        return queued(connection.send { buffer in
            for index in messages.indices { messages[index].encode(into: &buffer) } // borrowed, not copied
        })
    }

    /// Tells `onQueued` when the connection took a send; returns `took`.
    private func queued(_ took: Bool) -> Bool {
        if took { onQueued?() }
        return took
    }

    private func noteSent(_ message: Message) {
        if case .hello(let hello) = message, sentCapabilities == nil { sentCapabilities = hello.capabilities }
    }

    /// Sends a `FILE_CHUNK` framed straight from `data`, with no intermediate copy.
    @discardableResult
    public func sendFileChunk(id: UInt32, data: UnsafeRawBufferPointer) -> Bool {
        scheduler.assertOnExecutor()
        return queued(connection.send(Message.fileChunkHeader(id: id, dataCount: data.count)) && connection.send(data))
    }

    /// The peer finished its handshake; only heartbeats apply from now on, and frames may be
    /// as large as the protocol allows.
    public func handshakeCompleted() {
        scheduler.assertOnExecutor()
        liveness.handshakeCompleted()
        decoder.maximumPayload = Frame.maximumPayload
        awaitingHandshake = false
    }

    /// Stops reading for `reason` until `releaseReading(reason)`; reading goes on once no
    /// reason is left (each holder releases only its own).
    public func holdReading(_ reason: ReadHold) {
        scheduler.assertOnExecutor()
        if readingHeld.isEmpty { connection.pauseReading() }
        readingHeld.insert(reason)
    }

    /// Ends a `holdReading(reason)`. Frames a hold left undecoded are handled in a later turn.
    public func releaseReading(_ reason: ReadHold) {
        scheduler.assertOnExecutor()
        guard readingHeld.remove(reason), readingHeld.isEmpty else { return }
        connection.resumeReading()
        if framesWaiting {
            framesWaiting = false
            holdReading(.turn)
            scheduler.execute { [weak self] in self?.handleFrames() }
        }
    }

    /// Bytes waiting in the outbox above which producers (lines, files) wait for it to drain
    /// (a quarter of a TCP connection's 4 MiB limit, past which the link would be closed);
    /// drain handlers are called when it falls back to this, not only when it empties.
    public static let outboxMark = 1 << 20

    /// Calls `handler` each time the outbox empties or falls back to `outboxMark`, until it is
    /// set to nil; each waiter has its own handler (the connection has one).
    public func whenDrained(_ waiter: DrainWaiter, _ handler: (() -> Void)?) {
        scheduler.assertOnExecutor()
        drainHandlers[waiter] = handler
        guard !drainHandlers.isEmpty else { return connection.whenDrained(nil) }
        connection.whenDrained(toAtMost: Self.outboxMark) { [weak self] in
            guard let self else { return }
            for waiter in [DrainWaiter.files, .relay, .sender] { drainHandlers[waiter]?() }
        }
    }

    /// Tells the peer what it did wrong, and closes when the error requires it (or `closing`
    /// says so: an error that leaves a link open elsewhere may be one this side cannot go on
    /// after), within 1 s even if the peer reads nothing.
    public func reject(_ error: ProtocolError, closing: Bool? = nil) {
        scheduler.assertOnExecutor()
        guard violation == nil else { return }
        send(.error(error))
        if closing ?? error.code.closesConnection {
            violation = error
            decoder = FrameDecoder(maximumPayload: 0) // frees what was buffered
            finishWithin(.seconds(1))
        }
    }

    /// Says `GOODBYE`, sends what is queued and closes.
    public func goodbye(_ reason: String) {
        scheduler.assertOnExecutor()
        send(.goodbye(reason: reason))
        finishWithin(.seconds(2))
    }

    /// Sends what is queued and closes; a peer that neither reads nor closes (stopped, or
    /// hostile) is cut off after `grace`.
    private func finishWithin(_ grace: Duration) {
        connection.finish()
        // Once: a peer that keeps breaking the protocol must not make us keep timers.
        guard closing == nil, !connection.isClosed else { return }
        closing = scheduler.schedule(after: grace) { [connection] in connection.close() }
    }

    private func received(_ bytes: [UInt8]) {
        scheduler.assertOnExecutor()
        // After a violation that ends the link nothing the peer sends is read (nor buffered).
        guard violation == nil else { return }
        decoder.feed(bytes)
        liveness.heard(at: scheduler.now)
        if !readingHeld.contains(.turn) { handleFrames() }
    }

    /// Handles up to `framesPerTurn` frames from the decoder; when more wait, reading is held
    /// and the rest is handled in a later turn, after what else waits on the scheduler.
    private func handleFrames() {
        var handled = 0
        var bytes = 0
        while !connection.isClosed && violation == nil { // after finish() we no longer send, but still receive
            // A hold other than the turn (the disk) stops handling at
            // once: the frames stay in the decoder, so what the hold bounds stays bounded.
            guard !readingHeld.containsOther(than: .turn) else {
                framesWaiting = true
                readingHeld.remove(.turn)
                return
            }
            guard handled < PeerLink.framesPerTurn, bytes < PeerLink.bytesPerTurn else {
                holdReading(.turn)
                scheduler.execute { [weak self] in self?.handleFrames() }
                return
            }
            handled += 1
            let decoded: FrameDecoder.DecodedFrame?
            do throws(ProtocolError) {
                // Decoded where it lies in the decoder's buffer: no payload array per frame.
                decoded = try decoder.nextMessage(memberKeys: usesMemberKeys)
            } catch {
                reject(error) // an oversize length: the stream cannot be trusted after it
                break
            }
            guard let frame = decoded else { break }
            bytes += frame.payloadCount
            guard goodbyeReason == nil else { continue } // after its GOODBYE a peer says nothing more that counts
            // Moved out of the frame, not copied (a copy cost a retain and a release per frame).
            switch (consume frame).message {
            case .success(let message):
                if case .hello(let hello) = message, receivedCapabilities == nil { receivedCapabilities = hello.capabilities }
                switch message {
                case .ping(let token) where !awaitingHandshake && answersPings: send(.pong(token: token))
                case .pong where !awaitingHandshake && answersPings: break
                case .goodbye(let reason): goodbyeReason = reason; onMessage(message)
                case .error(let code, let text):
                    if ProtocolError.Code(rawValue: code)?.closesConnection ?? false { peerError = (code, text) }
                    onMessage(message)
                default: onMessage(message) // before the handshake, the server refuses all but HELLO
                }
            case .failure(let error) where awaitingHandshake && !error.code.closesConnection:
                reject(ProtocolError(.notHandshaken, "the first frame must be a valid HELLO (\(error.message))"))
            case .failure(let error):
                reject(error)
            }
        }
        releaseReading(.turn)
    }

    /// One timer at a time for the link's life, set for the next deadline after each tick.
    private func scheduleTimer() {
        timer = scheduler.schedule(at: liveness.nextDeadline, leeway: timerLeeway) { [self] in
            // the link lives while its timer does; ended() cancels it
            timer = nil
            // While we hold reading for the disk, the peer's silence is ours: it counts as
            // heard from. So it does while we hold it for the consumer, within bounds; the
            // pings go on then, so that the peer keeps hearing us.
            let heldForConsumer = readingHeld.contains(.consumer)
            if readingHeld.contains(.disk) { liveness.heard(at: scheduler.now) }
            switch liveness.tick(at: scheduler.now) {
            case .ping(let token): send(.ping(token: token))
            case .peerSilent where heldForConsumer && heldForConsumerCountsAsHeard: liveness.heard(at: scheduler.now)
            case .handshakeTimedOut: reject(ProtocolError(.handshakeTimeout, "no HELLO arrived within the handshake timeout"))
            case .peerSilent where heldForConsumer:
                reject(ProtocolError(.heartbeatTimeout,
                    "the room has read nothing from its members for too long (the program hosting it takes no events); try again later"))
            case .peerSilent:
                let silence = liveness.heartbeatInterval * (liveness.allowedMisses + 1)
                reject(ProtocolError(.heartbeatTimeout,
                    "no sign of life for \(silence.secondsText), \(counted(liveness.allowedMisses, "ping")) unanswered"))
            case nil: break
            }
            // Also while finishing: a peer that closed its side but reads nothing must not keep
            // the link (and what waits in its outbox) forever; silence ends it as above. After
            // a fatal error the closing grace takes over.
            if !connection.isClosed && violation == nil { scheduleTimer() }
        }
    }

    private func ended(_ reason: Connection.CloseReason) {
        timer?.cancel()
        timer = nil
        closing?.cancel()
        closing = nil
        let end: EndReason
        if let violation { end = .violation(violation) }
        else if let (code, text) = peerError { end = .peerError(code: code, message: text) }
        else if let goodbyeReason, reason == .closedByPeer || reason == .closedLocally { end = .goodbye(goodbyeReason) }
        else { end = .transport(reason) }
        let handler = onEnd
        onMessage = { _ in }
        onEnd = { _ in }
        handler(end)
    }
}

/// The reasons a link holds reading, as bits: asked before every frame handled, where a
/// `Set` cost an iteration and reference counting per frame.
private struct ReadHolds {
    private var bits: UInt8 = 0

    private static func bit(_ hold: PeerLink.ReadHold) -> UInt8 {
        switch hold {
        case .disk: 1
        case .turn: 2
        case .consumer: 4
        }
    }

    var isEmpty: Bool { bits == 0 }

    func contains(_ hold: PeerLink.ReadHold) -> Bool { bits & Self.bit(hold) != 0 }

    /// Whether a hold other than `hold` is in place.
    func containsOther(than hold: PeerLink.ReadHold) -> Bool { bits & ~Self.bit(hold) != 0 }

    mutating func insert(_ hold: PeerLink.ReadHold) { bits |= Self.bit(hold) }

    /// Removes `hold`; returns whether it was there.
    @discardableResult
    mutating func remove(_ hold: PeerLink.ReadHold) -> Bool {
        defer { bits &= ~Self.bit(hold) }
        return contains(hold)
    }
}
