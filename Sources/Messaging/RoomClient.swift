import DNSSD
import Dispatch
import DiscoveryCore
import MessagingCore
import RoomCodeExchange
import TransportCore
import TransportPOSIX

/// A member of a room: finds the server by name, joins, relays lines and files, and, when the
/// connection drops, reconnects with exponential backoff, re-resolving the name every time.
///
/// - Important: the client's state lives on its executor (its event loop in the tools); the
///   public methods may be called from anywhere and hand their work over to it. Events come
///   through `events`, an async sequence with back-pressure; lines go in through `send`, which
///   suspends while the room is slow.
public final class RoomClient: @unchecked Sendable {
    public struct Options: Sendable {
        public var instance: ServiceInstance
        /// Resolve, look up addresses and connect on this interface only, or on any (nil): the
        /// connection is bound to it (SO_BINDTODEVICE), so an address the service's host record
        /// gives that is reached over another interface fails to connect.
        public var interface: NetworkInterface?
        /// The name to ask for in the room.
        public var name: String
        /// How long finding and connecting may take, per attempt.
        public var timeout: Duration = .seconds(5)
        public var reconnect = true
        /// When the server says GOODBYE (its publisher stopped in an orderly way), wait for a
        /// room of the same name to come back and join it, instead of ending: for interactive
        /// members. Needs `reconnect`; ends when input ends (`finish`) or on `stop`.
        public var waitsForRoom = false
        /// While waiting for the room: the pause between two looks for it. Each look resolves
        /// the name and connects within `timeout`, listening for the name all that time, so a
        /// room that comes back is found at once, or at the latest after this pause; at most
        /// one look is under way at any time.
        public var roomLookInterval: Duration = .seconds(2)
        /// The longest pause between looks: each time a room that took us back closes again
        /// before `stableConnection`, the pause doubles, up to this (a room that welcomes and
        /// says goodbye in a loop is not rejoined every 2 s forever).
        public var roomLookMaximum: Duration = .seconds(32)
        public var backoffInitial: Duration = .seconds(1)
        public var backoffMaximum: Duration = .seconds(64)
        /// How long a connection must stay up (joined) before the reconnect backoff, its
        /// attempt count and the pause between looks for a closed room start again from the
        /// beginning. A server that lets us in and drops us sooner uses attempts up, so the
        /// client slows down and gives up as it would against a server that never answers.
        public var stableConnection: Duration = .seconds(30)
        /// Lines kept while disconnected; more are reported as not sent (`submit`; see
        /// `send` for producers that can wait instead).
        public var queueLimit = 1000
        /// Text that `send` lets be on its way (queued or not yet acknowledged) at once: what a
        /// reconnect sends again in one go stays far below a connection's outbox.
        public var maximumBytesInFlight = 1 << 20
        public var heartbeatInterval: Duration = .seconds(15)
        /// Once input has ended (`finish`), how long the server may go without acknowledging
        /// any of the text still unconfirmed before the session ends with it reported as not
        /// sent; nil: 4 heartbeat intervals, as long as a silent server is given. A server
        /// that stays alive (it pings) but never confirms would otherwise be waited for forever.
        /// Before input ends, the same time bounds a room that acknowledges nothing while
        /// `send`s wait for it: the connection is then treated as lost (see `send`).
        public var confirmationTimeout: Duration?
        /// Where files from the server go; nil refuses them.
        public var inbox: Inbox?
        /// How to talk to the service, decided from what it announces: it throws
        /// `UntrustedServer` to refuse it before connecting, or returns how to wrap each TCP
        /// connection (e.g. in TLS, with a check of the server's key). Nil: plaintext. Asked at
        /// every attempt, so a key pinned at first contact applies to every reconnect.
        public var securing: Securing?
        /// The room code to prove with the room-code exchange before HELLO, on every connection
        /// (docs/PROTOCOL.md, *Room codes*); needs TLS. A room that welcomes us without the
        /// exchange is refused.
        public var roomCode: RoomCode?
        /// Events `events` keeps for a slow consumer before the client stops reading from the
        /// server; it reads again once half of them were taken.
        public var eventBufferLimit = 256
        /// The most the buffered events may hold, roughly in bytes (`Event.weight`), before
        /// the client stops reading as for `eventBufferLimit`: 256 PRESENCE events of 65,535
        /// names each would otherwise hold hundreds of MiB.
        public var eventBufferBytes = 16 << 20

        public init(instance: ServiceInstance, name: String) {
            self.instance = instance
            self.name = name
        }
    }

    public enum Event: Sendable {
        case connected(to: SocketEndpoint, among: [SocketEndpoint])
        /// The room's HELLO, with the name it gives itself. With a room code, only after the
        /// room proved the code (just after `roomCodeConfirmed`).
        case serverHello(name: String)
        /// The room proved it knows our room code, in this TLS session with this key
        /// (`session.peerKey`): it is the room the code came from, no trust on first use needed.
        case roomCodeConfirmed(session: SecureSession)
        /// The server welcomed us under this name. `session` is the secure link's: the
        /// server's key and the safety code to compare with the publisher's; nil over plaintext.
        case joined(as: String, session: SecureSession?)
        /// `to` is nil for text to everyone, else this member's name (private).
        case text(from: String, to: String?, text: String)
        /// A line said to everyone before we joined, at `time` (milliseconds since 1970 UTC,
        /// by the server's clock), sent once we joined.
        case history(from: String, text: String, time: UInt64)
        /// Who is in the room (`.list`, the server first), joined or left. `keys` has one entry
        /// per name: the key its holder proved to the server, nil for one without (plaintext)
        /// and for every name when the server does not send keys.
        case presence(Message.PresenceKind, names: [String], keys: [PublicKeyFingerprint?])
        case serverError(String)
        /// More server errors or refused files than are shown one by one (20 in 10 s) came;
        /// this many were not shown.
        case suppressed(count: Int, what: String)
        case disconnected(reason: String)
        /// A reconnect or a rejoin reached the room on another host than the one we first
        /// joined (`now` and `was`: the addresses connected to): it may be someone else's room
        /// of the same name. Everything queued for the old room is reported as not sent
        /// (`notSent`, right after this event); what is submitted from now on goes to the new
        /// one, which is from now on the room's host.
        case hostChanged(room: String, now: SocketEndpoint, was: SocketEndpoint)
        /// The server said GOODBYE and `waitsForRoom` is on: the client looks for a room of
        /// the same name until one takes it back (`joined`), input ends, or `stop()`.
        case roomClosed(reason: String)
        case reconnecting(after: Duration, attempt: Int)
        case reconnectFailed(String)
        case file(FileTransfers.Event)
        /// A file we sent: `to` is the member it went to through the room, or nil for the server.
        case fileSent(path: String, to: String?, Result<FileTransfers.SentFile, FileError>)
        case notSent(String)
    }

    /// Decides how to talk to a resolved service; see `Options.securing`.
    public typealias Securing = @Sendable (_ service: ResolvedService) throws -> Wrapping
    /// Wraps a connection that lives on the given event loop (not started yet).
    public typealias Wrapping = @Sendable (_ connection: any ByteStream, _ loop: EventLoop) throws -> any ByteStream

    /// The service is not the one we trust: its announcement was refused before connecting, or
    /// the server presented a key that the secure link's check refused (`presented`). Final:
    /// nothing is retried, no other address is tried.
    public struct UntrustedServer: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String
        /// The key the server presented, when the refusal came from the handshake.
        public let presented: PublicKeyFingerprint?

        public init(_ message: String, presented: PublicKeyFingerprint? = nil) {
            self.message = message
            self.presented = presented
        }

        public var description: String { message }
    }

    /// How a session ended.
    public enum Outcome: Sendable, Hashable {
        /// Everything was sent and the connection closed in an orderly way.
        case finished
        /// The server closed the connection (or said GOODBYE) before input ended, and the
        /// client did not wait for it to come back (reconnecting off, one-shot use, or input
        /// ended while waiting).
        case closedByServer(String)
        /// The connection broke and could not be restored.
        case failed(String)
        /// `stop()` ended the session (e.g. the user pressed Ctrl-C).
        case interrupted
        /// A reconnect reached a server that is not the one we trust (see `UntrustedServer`);
        /// nothing was sent to it.
        case untrusted(UntrustedServer)
    }

    /// A stream to the server, open and not yet started, and where it leads. Not `Sendable`:
    /// the stream belongs to the client's executor, and is handed over to it once.
    public struct Connected {
        public let stream: any ByteStream
        /// The address the stream is connected to.
        public let endpoint: SocketEndpoint
        /// Every address that was tried or could have been.
        public let candidates: [SocketEndpoint]

        public init(stream: any ByteStream, endpoint: SocketEndpoint, candidates: [SocketEndpoint]) {
            self.stream = stream
            self.endpoint = endpoint
            self.candidates = candidates
        }
    }

    /// Finds the server named in the options and opens a stream to it whose handlers run on
    /// the client's executor, within the given time. The default resolves through DNS-SD and
    /// connects over TCP on the client's event loop; tests hand out in-memory streams.
    public typealias Connector = @Sendable (_ options: Options, _ timeout: Duration) async throws -> Connected

    let options: Options
    let executor: any Executor
    private let scheduler: any Scheduler
    private let connector: Connector
    private let fileWork: (any Executor)?
    /// The events on their way to the consumer (`events`).
    let eventBuffer: EventBuffer<Event>
    let window: FlowWindow
    // All below: on `executor`.
    /// `send`s waiting for the connection's outbox to drain below `outboxMark`, in order.
    let senders = PendingSends<RoomCommand>()
    var link: PeerLink?
    private var files: FileTransfers?
    private var joined = false
    private var pendingLines: [RoomCommand] = []
    /// Lines sent but not yet acknowledged, numbered in `session` (servers with
    /// `.acknowledgedText`): sent again after a reconnect, and relayed once by the server.
    /// Numbers are consecutive from `unacknowledgedStart`'s entry on, so an ACK removes a
    /// prefix: O(1) a line. `leavesAt`: the link's `deliveredByteCount` once the room's end
    /// has taken the whole line (set again when it is sent again), before which no room can
    /// have read it.
    private var unacknowledged: [(sequence: UInt64, command: RoomCommand, leavesAt: Int)] = []
    private var unacknowledgedStart = 0
    private var unacknowledgedCount: Int { unacknowledged.count - unacknowledgedStart }
    private var nextSequence: UInt64 = 0
    /// The server's HELLO on this connection was seen (a second one is ignored).
    private var serverHelloSeen = false
    /// Where this connection stands in the room-code exchange, and the exchange while it runs.
    var codeSteps = RoomCodeInitiatorSteps(usesCode: false)
    var initiator: CPace.Initiator?
    private let serverErrors: LimitedReports
    /// Reports of files offered to us, which a peer can repeat at will (`isOffered`).
    private let offeredFiles: LimitedReports
    private let session = UInt64.random(in: 1...UInt64.max)
    private(set) var serverAcknowledges = false
    /// The server's name and whether it relays files between members (its HELLO).
    private(set) var serverName = ""
    private var serverRelaysFiles = false
    /// Files waiting to be offered: to a member (through the server) or to the server (nil).
    private var pendingFiles: [(to: String?, path: String)] = []
    private var filesInFlight = 0
    private var finishing = false
    /// Why the room closed, while waiting for it to come back (`waitsForRoom`).
    private var roomClosedBecause: String?
    /// The room's host: the addresses it was reached at and the one connected to, from the
    /// first join (or the last one the member was warned about); nil before the first join.
    private var host: (addresses: Set<String>, endpoint: SocketEndpoint)?
    /// Where the connection being joined leads (set before its HELLO is sent).
    private var joining: Connected?
    /// When the current connection was welcomed, to tell a stable connection from a flapping one.
    private var joinedAt: ContinuousClock.Instant?
    /// Reconnect delays and attempts since the last stable connection (`stableConnection`).
    private var backoff: ExponentialBackoff
    private var reconnectAttempts = 0
    /// Attempts before giving up: up to and including the first at the maximum delay.
    private let allowedAttempts: Int
    /// Pauses between looks for a closed room, growing while the room keeps closing quickly.
    private var roomLooks: ExponentialBackoff
    /// `stop()` was called, or reconnecting was given up: nothing is retried any more.
    private var stopped = false
    /// `stop()` was called: a file cut short is the user's doing, not the peer's.
    private var interrupted = false
    /// The outcome has been decided.
    var isOver: Bool { result != nil }
    private var result: Outcome?
    private var outcome: CheckedContinuation<Outcome, Never>?
    private var joinWaiter: CheckedContinuation<Void, any Error>?
    /// Counts join attempts, so a timeout only ends the attempt that set it.
    private var joinAttempt = 0
    /// Counts acknowledgements that made progress, so a confirmation timeout only fires when
    /// none came since it was set.
    private var confirmationProgress = 0
    /// The connection's `deliveredByteCount` when progress was last counted (or at the join): an
    /// acknowledgement counts as progress only when the room's end has taken everything queued
    /// or some of it since (`progressMark(of:delivered:)`).
    private var progressDeliveredMark = 0
    /// Acknowledgements confirmed lines since progress was last counted, but the room's end
    /// took none of the text waiting for it: what a stall is then reported as.
    private var acknowledgedWithoutReading = false
    /// The timer that watches for acknowledgements while sends wait (`watchAcknowledgements`).
    private(set) var acknowledgementWatch: (any ScheduledWork)?
    /// Why the client closed the current connection itself: the room acknowledged nothing.
    private var stalledBecause: String?
    /// Why the last connection was lost, when the room acknowledged nothing: said again if
    /// reconnecting is given up.
    private var lastStall: String?

    /// A client that reaches the server through DNS-SD and TCP, and lives on `loop`: its
    /// state, its connection, its timers, and where events are delivered.
    /// - Parameters:
    ///   - connector: how to reach the server; nil for DNS-SD and TCP. Its streams must live on `loop`.
    ///   - fileWork: where received files are written and hashed; nil for a queue of their own.
    public convenience init(options: Options, loop: EventLoop, connector: Connector? = nil, fileWork: (any Executor)? = nil) {
        self.init(options: options, executor: loop, scheduler: loop, connector: connector ?? { options, timeout in
            try await RoomClient.connectOverTCP(options, loop, timeout)
        }, fileWork: fileWork, hook: nil)
    }

    /// A client on any executor, e.g. a queue with a manual clock in tests.
    /// - Parameters:
    ///   - executor: where the client's state lives.
    ///   - scheduler: the timers (join timeout, heartbeats, reconnect delays). A manual clock
    ///     must be driven on `executor`.
    ///   - connector: how to reach the server; its streams' handlers run on `executor`.
    ///   - fileWork: where received files are written and hashed; nil for a queue of their own.
    public convenience init(options: Options, executor: any Executor, scheduler: any Scheduler, connector: @escaping Connector,
                            fileWork: (any Executor)? = nil) {
        self.init(options: options, executor: executor, scheduler: scheduler, connector: connector, fileWork: fileWork, hook: nil)
    }

    /// A client whose events all go to `hook` at once, on `executor`, with no buffer and no
    /// back-pressure (nil: through `events`). For the fuzz target, which drives the client
    /// synchronously; the public API is `events`.
    package init(options: Options, executor: any Executor, scheduler: any Scheduler, connector: @escaping Connector,
                 fileWork: (any Executor)?, hook: (@Sendable (Event) -> Void)?) {
        self.options = options
        self.executor = executor
        self.scheduler = scheduler
        self.connector = connector
        self.fileWork = fileWork
        let eventBuffer = EventBuffer(limit: options.eventBufferLimit, weightLimit: options.eventBufferBytes, weight: \.weight, hook: hook)
        self.eventBuffer = eventBuffer
        // A server can send ERRORs and file offers by the thousand: 20 lines in 10 s each.
        serverErrors = LimitedReports(scheduler: scheduler) { eventBuffer.yield(.suppressed(count: $0, what: "ERROR frames from the server")) }
        offeredFiles = LimitedReports(scheduler: scheduler) {
            eventBuffer.yield(.suppressed(count: $0, what: "reports of files offered to us: receiving, failed or stored"))
        }
        window = FlowWindow(limit: options.maximumBytesInFlight)
        backoff = ExponentialBackoff(initial: options.backoffInitial, maximum: options.backoffMaximum)
        var attempts = 1
        var base = options.backoffInitial
        while base < options.backoffMaximum { base *= 2; attempts += 1 }
        allowedAttempts = attempts
        roomLooks = ExponentialBackoff(initial: options.roomLookInterval, maximum: max(options.roomLookInterval, options.roomLookMaximum), jitter: 0)
        // A full buffer stops reading from the server, on this link and the next ones.
        eventBuffer.pressure = { [weak self] full in
            guard let link = self?.link else { return }
            if full { link.holdReading(.consumer) } else { link.releaseReading(.consumer) }
        }
    }

    /// Hands an event to the consumer (`events`). On the executor.
    func onEvent(_ event: Event) {
        executor.assertOnExecutor()
        eventBuffer.yield(event)
    }

    /// Resolves the instance through DNS-SD and connects to the first address that answers.
    private static func connectOverTCP(_ options: Options, _ loop: EventLoop, _ timeout: Duration) async throws -> Connected {
        let deadline = ContinuousClock.now + timeout
        func remaining() -> Duration { max(.milliseconds(1), deadline - .now) }
        let resolved = try await options.instance.resolve(interfaceIndex: options.interface?.index ?? 0, timeout: timeout)
        let wrap = try options.securing?(resolved)
        let endpoints = try await usable(resolved.lookUpAddresses(timeout: remaining()), port: resolved.port)
        let (socket, winner) = try await TCPConnector.connect(to: endpoints, interface: options.interface?.name, timeout: remaining(), on: loop)
        let connection = Connection(socket: socket, peer: winner, loop: loop)
        // A connection never started is not on the loop yet: dropped when wrapping fails, it
        // closes its socket.
        return Connected(stream: try wrap?(connection, loop) ?? connection, endpoint: winner, candidates: endpoints)
    }

    /// Finds the server, connects and joins the room.
    /// - Throws: `DNSSDError` when the name is not found or the daemon is away,
    ///   `TransportError` when no address answers, `ProtocolError` when the server refuses.
    public func connect() async throws {
        let started = scheduler.now
        let connected = try await connector(options, options.timeout)
        let joinTimeout = max(.milliseconds(1), started + options.timeout - scheduler.now)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            executor.execute { [self] in
                // On the executor, as every event (before, this ran on the calling task's
                // thread: a race with the loop that the executor assertion found).
                onEvent(.connected(to: connected.endpoint, among: connected.candidates))
                guard !isOver else {
                    // Started only to be closed: that releases the socket and its sources.
                    connected.stream.start(onBytes: { _ in }, onClose: { _ in })
                    connected.stream.close()
                    return continuation.resume(throwing: ProtocolError(.handshakeTimeout, "the session already ended"))
                }
                joinWaiter = continuation
                joining = connected
                joinAttempt += 1
                let attempt = joinAttempt
                start(connected.stream)
                scheduler.schedule(after: joinTimeout) { [self] in
                    if attempt == joinAttempt { failJoin(ProtocolError(.handshakeTimeout, "the server did not welcome us in time")) }
                }
            }
        }
    }

    /// The addresses a client may try: an answer that points at loopback, nowhere, a group or
    /// port 0 comes from someone who is not the service.
    /// - Throws: `TransportError` when none is left.
    static func usable(_ endpoints: [SocketEndpoint], port: UInt16) throws(TransportError) -> [SocketEndpoint] {
        guard port != 0 else { throw TransportError("resolve", message: "the service's record gives port 0, where nothing can listen") }
        let usable = endpoints.filter { $0.address.unsuitableForAnnouncedService == nil }
        guard usable.isEmpty, !endpoints.isEmpty else { return usable }
        let refused = endpoints.map { "\($0.address) (\($0.address.unsuitableForAnnouncedService ?? "?"))" }
        throw TransportError("resolve", message: "the service's host resolves only to addresses a service cannot have: \(refused.joined(separator: ", "))")
    }

    /// Waits until the session ends (see `finish`), reconnecting as needed.
    public func run() async -> Outcome {
        await withCheckedContinuation { continuation in
            executor.execute { [self] in
                if let result { continuation.resume(returning: result) } else { outcome = continuation }
            }
        }
    }

    /// Sends a line without waiting (queued while disconnected; a full queue reports it as
    /// not sent). A producer that can wait uses `send`, which suspends while the room is slow.
    public func submit(_ command: RoomCommand) {
        enqueue(command, reserved: false)
    }

    private func enqueue(_ command: RoomCommand, reserved: Bool) {
        if !reserved, Self.holdsWindow(command) { window.take(Self.weight(of: command)) }
        executor.execute { [self] in
            guard !isOver else {
                // The session ended before this reached the queue (the server said GOODBYE
                // right after WELCOME): it was never sent, and is reported so.
                if case .send(_, let path) = command { return onEvent(.notSent("file \(path)")) }
                return notSent(command)
            }
            accept(command, reserved: reserved)
        }
    }

    /// Queues or delivers a command while the session runs. On the executor.
    /// - Parameter reserved: its room in the window is taken; without it, a full queue
    ///   reports it as not sent.
    func accept(_ command: RoomCommand, reserved: Bool) {
        executor.assertOnExecutor()
        switch command {
        case .send(let to, let path):
            pendingFiles.append((to, path))
            if joined { startFiles() }
        default:
            guard joined, let link else {
                guard reserved || pendingLines.count < options.queueLimit else { return notSent(command) }
                pendingLines.append(command)
                return
            }
            deliver(command, over: link)
        }
    }

    /// No more input: the session ends once every line and file is delivered.
    public func finish() {
        executor.execute { [self] in
            finishing = true
            if let reason = roomClosedBecause, !everythingDelivered {
                // Nobody is left to type: waiting for the room no longer serves anyone.
                stopped = true
                abandonUndelivered()
                return end(.closedByServer(reason))
            }
            finishIfDone()
            awaitConfirmation()
        }
    }

    /// While finishing: ends the session when the server, connected, confirms none of the
    /// text still unacknowledged within the confirmation timeout (set again after each
    /// acknowledgement that confirmed something).
    private func awaitConfirmation() {
        let timeout = confirmationTimeout
        let progress = confirmationProgress
        scheduler.schedule(after: timeout) { [weak self] in
            guard let self, !isOver, progress == confirmationProgress else { return }
            // Nothing unconfirmed yet (lines still queued), or reconnecting (the backoff has
            // limits of its own): look again later.
            guard joined, unacknowledgedCount > 0 else { return awaitConfirmation() }
            stopped = true
            abandonUndelivered()
            end(.failed(acknowledgedWithoutReading
                ? "the server acknowledged lines but read none of the text waiting to be sent for \(timeout.secondsText)"
                : "the server confirmed none of the text sent for \(timeout.secondsText)"))
        }
    }

    /// How long the server may go without acknowledging anything (`Options.confirmationTimeout`).
    private var confirmationTimeout: Duration { options.confirmationTimeout ?? options.heartbeatInterval * 4 }

    /// While `send`s wait (for the window or the outbox): when the connected room acknowledges
    /// none of the text on its way for the confirmation timeout, the connection is closed and
    /// handled as lost (reconnect, send again; `ended`). A room that answers pings would
    /// otherwise hold the producer forever. Set again after each acknowledgement that confirmed
    /// something, and at each join; ends once no send waits. On the executor.
    func watchAcknowledgements() {
        executor.assertOnExecutor()
        guard acknowledgementWatch == nil, !isOver, !finishing, let watched = link, joined else { return }
        let timeout = confirmationTimeout
        let progress = confirmationProgress
        // Whether the outbox moved is what the peer took from it (`deliveredByteCount`), not its
        // level: waiting sends refill it to the mark as fast as a slow room reads it. Offered
        // first, as at the check: room the kernel had already is not the room reading (it
        // gave a room that read nothing a second period).
        watched.connection.offerQueuedBytes()
        guard !watched.connection.isClosed else { return }
        let deliveredBefore = watched.connection.deliveredByteCount
        acknowledgementWatch = scheduler.schedule(after: timeout) { [weak self] in
            guard let self else { return }
            acknowledgementWatch = nil
            // Input ended: `awaitConfirmation` watches from now on; nothing waits: nothing to
            // watch, unless acknowledgements came while the room took nothing (the send an ACK
            // just let through may be on its way back: a fresh period would begin with it).
            guard !isOver, !finishing, sendsWait || acknowledgedWithoutReading else { return }
            guard progress == confirmationProgress, link === watched else { return watchAgainIfSendsWait() }
            if unacknowledgedCount > 0 {
                stalledBecause = acknowledgedWithoutReading
                    ? "the room acknowledged lines but read none of the text waiting to be sent for \(timeout.secondsText)"
                    : "the room acknowledged none of the text sent for \(timeout.secondsText) while more waited to be sent"
            } else if outboxIsFull, !roomTookAny(of: watched, since: deliveredBefore) {
                // Nothing to acknowledge (a room that does not acknowledge, or one that claimed
                // everything): then the outbox must move (the room takes some of it), or the
                // sends wait for ever. (The offer may have ended the connection: then it ended
                // for that reason, not this one.)
                guard !watched.connection.isClosed else { return }
                stalledBecause = "the room read none of the text waiting to be sent for \(timeout.secondsText)"
            } else {
                return watchAgainIfSendsWait()
            }
            watched.connection.close()
        }
    }

    private func watchAgainIfSendsWait() {
        if sendsWait { watchAcknowledgements() }
    }

    /// Whether an acknowledgement that confirmed lines counts as progress, given the link's
    /// `deliveredByteCount` (`delivered`): the room's end has taken everything queued (nothing
    /// waits in our outbox or our kernel), or some of it since progress was last counted
    /// (offered first, as at the checks). Returns the delivered count to count from next, or
    /// nil. Lines the room's end took may wait there unread, so a room could otherwise
    /// acknowledge those one at a time, each within the timeout, and hold our sends for hours
    /// while it reads nothing (re-review N2; our own kernel's send buffer, which grows to
    /// megabytes, counted as taken at first).
    private func progressMark(of link: PeerLink, delivered: Int) -> Int? {
        let connection = link.connection
        if delivered >= connection.sentByteCount + connection.bufferedByteCount || delivered > progressDeliveredMark { return delivered }
        return roomTookAny(of: link, since: progressDeliveredMark) ? connection.deliveredByteCount : nil
    }

    /// Whether `link`'s room took any of the outbox since its delivered count was
    /// `deliveredBefore` (what the room's end took, not what our own kernel took: bytes it
    /// accepts into a free send buffer say nothing of the room), once what waits has been
    /// offered (a room that reads slowly frees less than the loop waits for before it writes).
    private func roomTookAny(of link: PeerLink, since deliveredBefore: Int) -> Bool {
        link.connection.offerQueuedBytes()
        return link.connection.deliveredByteCount > deliveredBefore
    }

    /// An `ACK` beyond the next line's number acknowledges text never sent, and one of a line
    /// the room's end has not all taken (`notReceived`) text no room can have read: a protocol
    /// violation, and a room that would hold our sends for ever by claiming what it never read
    /// (one line further per confirmation timeout would do). Handled like a room that
    /// acknowledges nothing: the room is told, the connection is closed (within 1 s) as lost,
    /// and never counts as stable. On the executor.
    private func refuseAcknowledgement(_ through: UInt64, notReceived: UInt64? = nil) {
        guard let link else { return }
        let what = if let notReceived {
            "ACK through \(through) acknowledges line \(notReceived), which the room has not all received yet"
        } else {
            "ACK through \(through) acknowledges text never sent (the next line is number \(nextSequence))"
        }
        stalledBecause = "the room broke the protocol: \(what)"
        link.reject(ProtocolError(.malformedFrame, what), closing: true)
    }

    /// Ends now (e.g. on SIGINT): what is still queued is reported as not sent.
    public func stop() {
        executor.execute { [self] in
            stopped = true
            interrupted = true
            finishing = true
            abandonUndelivered()
            if let link { link.goodbye("stopped") } else { end(.interrupted) }
        }
    }

    private func start(_ stream: any ByteStream) {
        let link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: options.heartbeatInterval)
        self.link = link
        serverHelloSeen = false
        files = FileTransfers(link: link, inbox: options.inbox, disk: fileWork, hashing: fileWork) { [self] event in
            if Self.isOffered(event), !offeredFiles.admit() { return }
            onEvent(.file(event))
        }
        // A room that keeps the connection up but reads none of a file's data: handled as a
        // lost connection, and like one that acknowledges no text, never as a stable one.
        files?.onOutboxStall = { [self] timeout in
            stalledBecause = "the room read none of the file data waiting to be sent for \(timeout.secondsText)"
        }
        codeSteps = RoomCodeInitiatorSteps(usesCode: options.roomCode != nil)
        initiator = nil
        // With a room code, a PING is refused like any frame but the exchange's until the room proved it.
        link.answersPings = options.roomCode == nil
        link.start(onMessage: { [self] message in received(message) }, onEnd: { [self] reason in ended(link, reason) })
        // A consumer still behind: nothing is read on this link either until it catches up.
        if eventBuffer.isPressing { link.holdReading(.consumer) }
        // With a room code our HELLO waits for the exchange (the server's HELLO starts it).
        if options.roomCode == nil { link.send(.hello(.init(name: options.name))) }
    }

    /// Whether a server may send this before its WELCOME (docs/PROTOCOL.md, *Handshake*).
    static func comesBeforeWelcome(_ message: Message) -> Bool {
        switch message {
        case .hello, .welcome, .error, .goodbye, .ping, .pong, .codeStart, .codeReply, .codeConfirm: true
        case .text, .who, .presence, .presenceWithKeys, .session, .acknowledged, .history, .fileOffer, .fileAccept, .fileChunk,
             .fileEnd, .fileResult, .fileOfferTo, .fileOfferFrom, .fileCancel, .fileCredit: false
        }
    }

    /// Whether a file event is one a peer can make us print at will, by offering files (and
    /// cancelling them, or offering what we have): limited like other repeatable reports.
    /// Relayed events count as what they wrap.
    static func isOffered(_ event: FileTransfers.Event) -> Bool {
        switch event {
        case .relayed(_, let inner): isOffered(inner)
        case .receiving, .receiveFailed, .stored: true
        case .sending, .progress: false
        }
    }

    private func received(_ message: Message) {
        switch codeSteps.receive(message) {
        case .start: startRoomCode()
        case .finish(let share, let tag, let data): return finishRoomCode(share: share, tag: tag, associatedData: data)
        case .refuse(let error): return failRoomCode(error)
        case .refusedBeforeProof(let error):
            initiator = nil
            return failJoin(error)
        case .ignore: return
        case .other: break
        }
        // Until WELCOME a server sends only its HELLO, the exchange's CODE_REPLY, ERROR and
        // GOODBYE (and PING); anything else (text, presence, files) comes from no room we are in.
        guard joined || Self.comesBeforeWelcome(message) else { return }
        if let files, files.handle(message) { return }
        switch message {
        case .hello(let hello):
            guard !serverHelloSeen else { return } // a server says HELLO once; the first one counts
            serverHelloSeen = true
            serverAcknowledges = hello.capabilities.contains(.acknowledgedText)
            serverRelaysFiles = hello.capabilities.contains(.relayedFiles)
            serverName = hello.name
            // With a room code, the name is shown only once the room proved the code
            // (`finishRoomCode`): an impostor's HELLO reaches no one.
            if options.roomCode == nil { onEvent(.serverHello(name: hello.name)) }
        case .welcome(let name):
            guard !joined, serverHelloSeen else { return } // once a connection, after HELLO
            joined = true
            joinedAt = scheduler.now
            roomClosedBecause = nil
            checkHost()
            onEvent(.joined(as: name, session: link?.connection.secureSession))
            joinWaiter?.resume()
            joinWaiter = nil
            resendUnacknowledged()
            flushPending()
            progressDeliveredMark = link?.connection.deliveredByteCount ?? 0
            acknowledgedWithoutReading = false
            if sendsWait { watchAcknowledgements() }
        case .acknowledged(let through):
            // Everything below `through` was handled: beyond the next number, text never sent.
            guard through <= nextSequence else { return refuseAcknowledgement(through) }
            // The last line it confirms must have reached the room's end: no room can have read
            // it before. (What its end took is asked once an ACK, a system call.)
            var delivered: Int?
            if let first = unacknowledged[unacknowledgedStart...].first, through > first.sequence, let link {
                let last = unacknowledged[unacknowledgedStart + Int(through - first.sequence) - 1]
                let taken = link.connection.deliveredByteCount
                if taken < last.leavesAt { return refuseAcknowledgement(through, notReceived: last.sequence) }
                delivered = taken
            }
            let unconfirmed = unacknowledgedCount
            while unacknowledgedStart < unacknowledged.count, unacknowledged[unacknowledgedStart].sequence < through {
                window.release(Self.weight(of: unacknowledged[unacknowledgedStart].command))
                unacknowledgedStart += 1
            }
            if unacknowledgedCount < unconfirmed, let link, let delivered {
                if let mark = progressMark(of: link, delivered: delivered) {
                    progressDeliveredMark = mark
                    acknowledgedWithoutReading = false
                    confirmationProgress += 1
                    if finishing { awaitConfirmation() }
                    acknowledgementWatch?.cancel()
                    acknowledgementWatch = nil
                    if sendsWait { watchAcknowledgements() }
                } else {
                    acknowledgedWithoutReading = true
                }
            }
            if unacknowledgedStart == unacknowledged.count {
                unacknowledged.removeAll(keepingCapacity: unacknowledged.count < 4096)
                unacknowledgedStart = 0
            } else if unacknowledgedStart > 4096, unacknowledgedStart * 2 > unacknowledged.count {
                unacknowledged.removeFirst(unacknowledgedStart)
                unacknowledgedStart = 0
            }
            finishIfDone()
        case .text(let from, let to, let text): onEvent(.text(from: from, to: to.isEmpty ? nil : to, text: text))
        case .history(let time, let from, let text): onEvent(.history(from: from, text: text, time: time))
        case .presence(let kind, let names): onEvent(.presence(kind, names: names, keys: names.map { _ in nil }))
        case .presenceWithKeys(let kind, let members):
            onEvent(.presence(kind, names: members.map(\.name), keys: members.map { $0.key.flatMap(PublicKeyFingerprint.init(bytes:)) }))
        case .error(let code, let text):
            let error = ProtocolError(ProtocolError.Code(rawValue: code) ?? .malformedFrame, text)
            if !joined { failJoin(error) } else {
                if serverErrors.admit() { onEvent(.serverError("\(ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"): \(text)")) }
            }
        case .codeStart, .codeReply, .codeConfirm: break // the exchange's frames are codeSteps'
        case .goodbye, .ping, .pong, .who, .session, .fileOffer, .fileAccept, .fileChunk, .fileEnd, .fileResult,
             .fileOfferTo, .fileOfferFrom, .fileCancel, .fileCredit: break
        }
    }

    /// On the first join, remembers the room's host; on a later one from another host, warns
    /// and reports everything queued for the old room as not sent, before anything reaches
    /// the new one. Without server keys, a host is its addresses: the exact IPv6 address (not
    /// its /64, which the whole LAN shares), the IPv4 address, IPv4-mapped as IPv4.
    private func checkHost() {
        guard let joining else { return }
        // Over a secure link the server's key was checked against what we trust; its address
        // may change freely (the same key is the same room).
        guard joining.stream.secureSession == nil else { return self.joining = nil }
        func key(_ endpoint: SocketEndpoint) -> String { endpoint.address.unmappedIPv4?.description ?? endpoint.address.description }
        let addresses = Set((joining.candidates + [joining.endpoint]).map(key))
        defer { self.joining = nil }
        guard let host else { return host = (addresses, joining.endpoint) }
        guard !host.addresses.contains(key(joining.endpoint)) else { return }
        onEvent(.hostChanged(room: options.instance.name, now: joining.endpoint, was: host.endpoint))
        abandonUndelivered(because: "it was for the room on \(host.endpoint.addressWithScope), which now answers from another host")
        self.host = (addresses, joining.endpoint)
    }

    /// After (re)joining: lines the previous connection may have lost go first, under their
    /// old numbers, so that the server relays each once; a server that does not acknowledge
    /// gets them as new lines.
    private func resendUnacknowledged() {
        guard let link else { return }
        let waiting = unacknowledged[unacknowledgedStart...]
        if serverAcknowledges {
            link.send(.session(id: session, next: waiting.first?.sequence ?? nextSequence))
            for index in waiting.indices {
                unacknowledged[index].leavesAt = sendText(unacknowledged[index].command, over: link)
            }
        } else {
            pendingLines.insert(contentsOf: waiting.map(\.command), at: 0)
            unacknowledged = []
            unacknowledgedStart = 0
        }
    }

    private func failJoin(_ error: any Error) {
        guard let waiter = joinWaiter else { return }
        joinWaiter = nil
        waiter.resume(throwing: error)
        link?.connection.close()
    }

    private func deliver(_ command: RoomCommand, over link: PeerLink) {
        switch command {
        case .say, .message:
            if serverAcknowledges {
                unacknowledged.append((nextSequence, command, sendText(command, over: link)))
                nextSequence += 1
            } else {
                window.release(Self.weight(of: command)) // nothing will acknowledge it
                sendText(command, over: link)
            }
        case .who:
            window.release(Self.weight(of: command))
            link.send(.who)
        case .send, .help, .quit: break
        }
    }

    /// Queues a line's `TEXT`; returns the link's `deliveredByteCount` at which the room's end
    /// has taken all of it.
    @discardableResult
    private func sendText(_ command: RoomCommand, over link: PeerLink) -> Int {
        switch command {
        case .say(let text): link.send(.text(from: "", to: "", text: text))
        case .message(let to, let text): link.send(.text(from: "", to: to, text: text))
        case .who, .send, .help, .quit: break
        }
        return link.connection.sentByteCount + link.connection.bufferedByteCount
    }

    private func flushPending() {
        guard let link else { return }
        for command in pendingLines { deliver(command, over: link) }
        pendingLines = []
        startFiles()
        finishIfDone()
    }

    private func startFiles() {
        guard let files else { return }
        while !pendingFiles.isEmpty {
            let (to, path) = pendingFiles.removeFirst()
            // A file for the server's own name is a file for the server, whoever relays.
            let member = to.flatMap { MemberName.same($0, serverName) ? nil : $0 }
            if let member, !serverRelaysFiles {
                onEvent(.fileSent(path: path, to: member, .failure(FileError(
                    "cannot send \(path) to \(member): the room's svc-publish is too old to pass files between members; update it, or send to the room with /send <path>"))))
                continue
            }
            filesInFlight += 1
            files.send(path: path, to: member) { [self] result in
                filesInFlight -= 1
                if case .failure = result, link == nil, options.reconnect, !stopped {
                    pendingFiles.append((to, path)) // offered again after reconnecting: it resumes
                } else if case .failure = result, interrupted {
                    onEvent(.fileSent(path: path, to: member, .failure(FileError("\(path) was not delivered: interrupted; send it again to resume"))))
                } else {
                    onEvent(.fileSent(path: path, to: member, result))
                }
                finishIfDone()
            }
        }
    }

    /// No line waits to be sent or acknowledged, and no file is on its way.
    private var everythingDelivered: Bool {
        pendingLines.isEmpty && unacknowledgedCount == 0 && pendingFiles.isEmpty && filesInFlight == 0
    }

    private func finishIfDone() {
        // After `stop()` the session ends as interrupted, when the link has closed.
        guard finishing, !interrupted, everythingDelivered else { return }
        if let link {
            if joined { link.goodbye("done") }
        } else {
            end(.finished) // disconnected with nothing left to deliver
        }
    }

    private func ended(_ ended: PeerLink, _ reason: PeerLink.EndReason) {
        guard ended === link else { return }
        // The events end with the session, once its connection is gone too.
        defer { if isOver { eventBuffer.finish() } }
        // Sends that waited for this connection's outbox queue for the next one (or fail, if
        // the session ends here: `end`).
        defer { admitSenders() }
        let wasJoined = joined
        acknowledgementWatch?.cancel()
        acknowledgementWatch = nil
        let stalled = stalledBecause
        stalledBecause = nil
        // A connection that stayed up long enough starts reconnecting and looking afresh; one
        // to a room that acknowledged nothing counts as a failed attempt, however long it lasted.
        if stalled == nil, let joinedAt, scheduler.now - joinedAt >= options.stableConnection {
            backoff.reset()
            reconnectAttempts = 0
            roomLooks.reset()
        }
        joinedAt = nil
        joining = nil
        link = nil
        joined = false
        files?.linkEnded(reason)
        files = nil
        if joinWaiter != nil {
            if let presented = ended.connection.rejectedPeerKey {
                return failJoin(UntrustedServer("the server presented the key \(presented.full), not the one we trust: \(reason)", presented: presented))
            }
            // A server that broke the protocol refused us in effect; one that just went away
            // did not let us in in time.
            let code: ProtocolError.Code = if case .violation(let error) = reason { error.code } else { .handshakeTimeout }
            return failJoin(ProtocolError(code, "the connection ended before the server welcomed us: \(reason)"))
        }
        if stopped { return end(.interrupted) }
        guard wasJoined else { return } // a failed join is connect()'s to report (or to retry)
        if finishing && everythingDelivered {
            return end(.finished)
        }
        // A server that says GOODBYE is leaving on purpose: an interactive member waits for
        // the room to come back, others end; only a lost connection is retried with backoff.
        // Either way, what the server never confirmed is reported, never silently dropped.
        if case .goodbye = reason {
            guard options.waitsForRoom, options.reconnect, !finishing else {
                onEvent(.disconnected(reason: reason.description))
                abandonUndelivered()
                return end(.closedByServer(reason.description))
            }
            roomClosedBecause = reason.description
            onEvent(.roomClosed(reason: reason.description))
            let pause = roomLooks.nextDelay()
            Task { await waitForRoom(pausing: pause) }
            return
        }
        lastStall = stalled
        onEvent(.disconnected(reason: stalled ?? reason.description))
        guard options.reconnect, !stopped else {
            abandonUndelivered()
            if let stalled { return end(.failed(stalled)) }
            return end(reason.isOrderly || stopped ? .closedByServer(reason.description) : .failed(reason.description))
        }
        Task { await reconnect() }
    }

    /// Tries again after 1, 2, 4 ... seconds up to the maximum; gives up when the attempt
    /// after the maximum delay fails too. The delays and the attempts count on from the last
    /// stable connection (`stableConnection`): one that is let in and dropped again at once
    /// does not start them over, so a flapping server is given up on like a silent one.
    private func reconnect() async {
        while true {
            // A stopped loop (the process is ending) drops the work: nothing more to try.
            let next: (delay: Duration, attempt: Int)? = await executor.submit(ifDropped: nil) { [self] in
                guard !isOver else { return nil }
                guard reconnectAttempts < allowedAttempts else {
                    stopped = true
                    abandonUndelivered()
                    let lost = lastStall.map { "; the last connection was closed because \($0)" } ?? ""
                    end(.failed("gave up reconnecting after \(counted(allowedAttempts, "attempt")) (the count starts again only after a connection stays up \(options.stableConnection.secondsText))\(lost)"))
                    return nil
                }
                reconnectAttempts += 1
                return (backoff.nextDelay(), reconnectAttempts)
            }
            guard let next else { return }
            executor.execute { [self] in onEvent(.reconnecting(after: next.delay, attempt: next.attempt)) }
            await scheduler.sleep(for: next.delay)
            if await executor.submit(ifDropped: true, { [self] in isOver }) { return }
            do {
                try await connect()
                return
            } catch let error as UntrustedServer {
                return refuseUntrusted(error)
            } catch {
                // The daemon away while reconnecting is most often a restart: said so.
                let failure = (error as? DNSSDError)?.lostMessage ?? "\(error)"
                executor.execute { [self] in onEvent(.reconnectFailed(failure)) }
            }
        }
    }

    /// Looks for the room again and again, one look at a time, a pause between looks, until it
    /// takes us back or the session ends (`stop`, or `finish` with something undelivered).
    /// A look that fails (not found, nothing answers, the room is full) is not reported: the
    /// member was told once that the room closed and what to do.
    /// - Parameter pause: between two looks: `roomLookInterval`, longer while the room keeps
    ///   closing soon after taking us back.
    private func waitForRoom(pausing pause: Duration) async {
        while true {
            await scheduler.sleep(for: pause)
            if await executor.submit(ifDropped: true, { [self] in isOver }) { return }
            do {
                try await connect()
                return
            } catch let error as UntrustedServer {
                return refuseUntrusted(error)
            } catch {}
        }
    }

    /// A reconnect or a look for the room reached a server we do not trust: the session ends,
    /// and what was waiting for the room is reported as not sent (none of it went there).
    private func refuseUntrusted(_ error: UntrustedServer) {
        executor.execute { [self] in
            stopped = true
            abandonUndelivered()
            end(.untrusted(error))
        }
    }

    private func end(_ result: Outcome) {
        guard !isOver else { return }
        self.result = result
        window.close()
        failSenders()
        outcome?.resume(returning: result)
        outcome = nil
        if let link { link.connection.close() } else { eventBuffer.finish() }
    }

    /// The session ends without another connection, or the room moved to another host:
    /// every line not yet acknowledged or not yet sent, and every file not yet on its way, is
    /// reported as not sent.
    /// - Parameter because: why, when it is not simply that the session ended.
    private func abandonUndelivered(because: String? = nil) {
        let detail = because.map { " (\($0))" }
        for entry in unacknowledged[unacknowledgedStart...] { notSent(entry.command, detail ?? " (sent, but the server never confirmed it)") }
        for command in pendingLines { notSent(command, detail ?? "") }
        for (_, path) in pendingFiles { onEvent(.notSent("file \(path)" + (detail ?? ""))) }
        unacknowledged = []
        unacknowledgedStart = 0
        pendingLines = []
        pendingFiles = []
    }

    /// Reports a line as not sent and gives back its place in the window.
    private func notSent(_ command: RoomCommand, _ detail: String = "") {
        window.release(Self.weight(of: command))
        onEvent(.notSent(describe(command) + detail))
    }

    /// Whether a command occupies the window while it is on its way (files do not: they have
    /// flow control of their own).
    static func holdsWindow(_ command: RoomCommand) -> Bool {
        switch command {
        case .send, .help, .quit: false
        case .say, .message, .who: true
        }
    }

    /// What a line counts for in the window: its bytes, and a little for the frame.
    static func weight(of command: RoomCommand) -> Int {
        switch command {
        case .say(let text): text.utf8.count + 16
        case .message(let to, let text): to.utf8.count + text.utf8.count + 16
        case .who, .help, .quit: 16
        case .send: 0
        }
    }

    private func describe(_ command: RoomCommand) -> String {
        switch command {
        case .say(let text): text
        case .message(let to, let text): "/msg \(to) \(text)"
        case .who: "/who"
        case .send(_, let path): "/send \(path)"
        case .help: "/help"
        case .quit: "/quit"
        }
    }
}
