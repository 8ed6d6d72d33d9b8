import DNSSD
import Dispatch
import DiscoveryCore
import MessagingCore
import TransportCore
import TransportPOSIX

/// A member of a room: finds the server by name, joins, relays lines and files, and, when the
/// connection drops, reconnects with exponential backoff, re-resolving the name every time.
///
/// - Important: events are delivered on an internal queue; the public methods may be called
///   from anywhere.
public final class RoomClient: @unchecked Sendable {
    public struct Options: Sendable {
        public var instance: ServiceInstance
        /// The name to ask for in the room.
        public var name: String
        /// How long finding and connecting may take, per attempt.
        public var timeout: Duration = .seconds(5)
        public var reconnect = true
        public var backoffInitial: Duration = .seconds(1)
        public var backoffMaximum: Duration = .seconds(64)
        /// Lines kept while disconnected; more are reported as not sent.
        public var queueLimit = 1000
        public var heartbeatInterval: Duration = .seconds(15)
        /// Where files from the server go; nil refuses them.
        public var inbox: Inbox?

        public init(instance: ServiceInstance, name: String) {
            self.instance = instance
            self.name = name
        }
    }

    public enum Event: Sendable {
        case connected(to: SocketEndpoint, among: [SocketEndpoint])
        case serverHello(name: String)
        case joined(as: String)
        /// `to` is nil for text to everyone, else this member's name (private).
        case text(from: String, to: String?, text: String)
        case presence(Message.PresenceKind, names: [String])
        case serverError(String)
        case disconnected(reason: String)
        case reconnecting(after: Duration, attempt: Int)
        case reconnectFailed(String)
        case file(FileTransfers.Event)
        case fileSent(path: String, Result<FileTransfers.SentFile, FileError>)
        case notSent(String)
    }

    /// How a session ended.
    public enum Outcome: Sendable, Hashable {
        /// Everything was sent and the connection closed in an orderly way.
        case finished
        /// The server closed the connection and reconnecting is off.
        case closedByServer(String)
        /// The connection broke and could not be restored.
        case failed(String)
    }

    /// A stream to the server, open and not yet started, and where it leads.
    public struct Connected: Sendable {
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
    /// the given queue, within the given time. The default resolves through DNS-SD and
    /// connects over TCP; tests hand out in-memory streams.
    public typealias Connector = @Sendable (_ options: Options, _ queue: DispatchQueue, _ timeout: Duration) async throws -> Connected

    private let options: Options
    private let queue: DispatchQueue
    private let scheduler: any Scheduler
    private let connector: Connector
    private let fileWork: (any Executor)?
    private let onEvent: @Sendable (Event) -> Void
    // All below: on `queue`.
    private var link: PeerLink?
    private var files: FileTransfers?
    private var joined = false
    private var pendingLines: [RoomCommand] = []
    /// Lines sent but not yet acknowledged, numbered in `session` (servers with
    /// `.acknowledgedText`): sent again after a reconnect, and relayed once by the server.
    private var unacknowledged: [(sequence: UInt64, command: RoomCommand)] = []
    private var nextSequence: UInt64 = 0
    private let session = UInt64.random(in: 1...UInt64.max)
    private var serverAcknowledges = false
    private var pendingFiles: [String] = []
    private var filesInFlight = 0
    private var finishing = false
    /// `stop()` was called, or reconnecting was given up: nothing is retried any more.
    private var stopped = false
    /// The outcome has been decided.
    private var isOver: Bool { result != nil }
    private var result: Outcome?
    private var outcome: CheckedContinuation<Outcome, Never>?
    private var joinWaiter: CheckedContinuation<Void, any Error>?
    /// Counts join attempts, so a timeout only ends the attempt that set it.
    private var joinAttempt = 0

    /// - Parameters:
    ///   - queue: where the client's state lives and events are delivered.
    ///   - scheduler: the timers (join timeout, heartbeats, reconnect delays); nil for Dispatch
    ///     timers on `queue`. A manual clock must be driven on `queue`.
    ///   - connector: how to reach the server; nil for DNS-SD and TCP.
    ///   - fileWork: where received files are written and hashed; nil for a queue of their own.
    public init(options: Options, queue: DispatchQueue = DispatchQueue(label: "svc.room.client"), scheduler: (any Scheduler)? = nil,
                connector: Connector? = nil, fileWork: (any Executor)? = nil, onEvent: @escaping @Sendable (Event) -> Void) {
        self.options = options
        self.queue = queue
        self.scheduler = scheduler ?? DispatchScheduler(queue: queue)
        self.connector = connector ?? RoomClient.connectOverTCP
        self.fileWork = fileWork
        self.onEvent = onEvent
    }

    /// Resolves the instance through DNS-SD and connects to the first address that answers.
    private static func connectOverTCP(_ options: Options, _ queue: DispatchQueue, _ timeout: Duration) async throws -> Connected {
        let deadline = ContinuousClock.now + timeout
        func remaining() -> Duration { max(.milliseconds(1), deadline - .now) }
        let resolved = try await options.instance.resolve(timeout: timeout)
        let endpoints = try await resolved.lookUpAddresses(timeout: remaining())
        let (socket, winner) = try await TCPConnector.connect(to: endpoints, timeout: remaining())
        return Connected(stream: Connection(socket: socket, peer: winner, queue: queue), endpoint: winner, candidates: endpoints)
    }

    /// Finds the server, connects and joins the room.
    /// - Throws: `DNSSDError` when the name is not found or the daemon is away,
    ///   `TransportError` when no address answers, `ProtocolError` when the server refuses.
    public func connect() async throws {
        let started = scheduler.now
        let connected = try await connector(options, queue, options.timeout)
        onEvent(.connected(to: connected.endpoint, among: connected.candidates))
        let joinTimeout = max(.milliseconds(1), started + options.timeout - scheduler.now)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { [self] in
                joinWaiter = continuation
                joinAttempt += 1
                let attempt = joinAttempt
                start(connected.stream)
                scheduler.schedule(after: joinTimeout) { [self] in
                    if attempt == joinAttempt { failJoin(ProtocolError(.handshakeTimeout, "the server did not welcome us in time")) }
                }
            }
        }
    }

    /// Waits until the session ends (see `finish`), reconnecting as needed.
    public func run() async -> Outcome {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                if let result { continuation.resume(returning: result) } else { outcome = continuation }
            }
        }
    }

    /// Sends a line (queued while disconnected).
    public func submit(_ command: RoomCommand) {
        queue.async { [self] in
            switch command {
            case .send(_, let path):
                pendingFiles.append(path)
                if joined { startFiles() }
            default:
                guard joined, let link else {
                    guard pendingLines.count < options.queueLimit else { return onEvent(.notSent(describe(command))) }
                    pendingLines.append(command)
                    return
                }
                deliver(command, over: link)
            }
        }
    }

    /// No more input: the session ends once every line and file is delivered.
    public func finish() {
        queue.async { [self] in
            finishing = true
            finishIfDone()
        }
    }

    /// Ends now (e.g. on SIGINT): what is still queued is reported as not sent.
    public func stop() {
        queue.async { [self] in
            stopped = true
            finishing = true
            for command in pendingLines { onEvent(.notSent(describe(command))) }
            for path in pendingFiles { onEvent(.notSent("file \(path)")) }
            pendingLines = []
            pendingFiles = []
            if let link { link.goodbye("stopped") } else { end(.finished) }
        }
    }

    private func start(_ stream: any ByteStream) {
        let link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: options.heartbeatInterval)
        self.link = link
        files = FileTransfers(link: link, inbox: options.inbox, disk: fileWork, hashing: fileWork) { [onEvent] event in onEvent(.file(event)) }
        link.start(onMessage: { [self] message in received(message) }, onEnd: { [self] reason in ended(link, reason) })
        link.send(.hello(.init(name: options.name)))
    }

    private func received(_ message: Message) {
        if let files, files.handle(message) { return }
        switch message {
        case .hello(let hello):
            serverAcknowledges = hello.capabilities.contains(.acknowledgedText)
            onEvent(.serverHello(name: hello.name))
        case .welcome(let name):
            joined = true
            onEvent(.joined(as: name))
            joinWaiter?.resume()
            joinWaiter = nil
            resendUnacknowledged()
            flushPending()
        case .acknowledged(let through):
            unacknowledged.removeAll { $0.sequence < through }
            finishIfDone()
        case .text(let from, let to, let text): onEvent(.text(from: from, to: to.isEmpty ? nil : to, text: text))
        case .presence(let kind, let names): onEvent(.presence(kind, names: names))
        case .error(let code, let text):
            let error = ProtocolError(ProtocolError.Code(rawValue: code) ?? .malformedFrame, text)
            if !joined { failJoin(error) } else { onEvent(.serverError("\(ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"): \(text)")) }
        case .goodbye, .ping, .pong, .who, .session, .fileOffer, .fileAccept, .fileChunk, .fileEnd, .fileResult: break
        }
    }

    /// After (re)joining: lines the previous connection may have lost go first, under their
    /// old numbers, so that the server relays each once; a server that does not acknowledge
    /// gets them as new lines.
    private func resendUnacknowledged() {
        guard let link else { return }
        if serverAcknowledges {
            link.send(.session(id: session, next: unacknowledged.first?.sequence ?? nextSequence))
            for entry in unacknowledged { sendText(entry.command, over: link) }
        } else {
            pendingLines.insert(contentsOf: unacknowledged.map(\.command), at: 0)
            unacknowledged = []
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
                unacknowledged.append((nextSequence, command))
                nextSequence += 1
            }
            sendText(command, over: link)
        case .who: link.send(.who)
        case .send, .help: break
        }
    }

    private func sendText(_ command: RoomCommand, over link: PeerLink) {
        switch command {
        case .say(let text): link.send(.text(from: "", to: "", text: text))
        case .message(let to, let text): link.send(.text(from: "", to: to, text: text))
        case .who, .send, .help: break
        }
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
            let path = pendingFiles.removeFirst()
            filesInFlight += 1
            files.send(path: path) { [self] result in
                filesInFlight -= 1
                if case .failure = result, link == nil, options.reconnect, !stopped {
                    pendingFiles.append(path) // offered again after reconnecting: it resumes
                } else {
                    onEvent(.fileSent(path: path, result))
                }
                finishIfDone()
            }
        }
    }

    /// No line waits to be sent or acknowledged, and no file is on its way.
    private var everythingDelivered: Bool {
        pendingLines.isEmpty && unacknowledged.isEmpty && pendingFiles.isEmpty && filesInFlight == 0
    }

    private func finishIfDone() {
        guard finishing, everythingDelivered else { return }
        if let link {
            if joined { link.goodbye("done") }
        } else {
            end(.finished) // disconnected with nothing left to deliver
        }
    }

    private func ended(_ ended: PeerLink, _ reason: PeerLink.EndReason) {
        guard ended === link else { return }
        let wasJoined = joined
        link = nil
        joined = false
        files?.linkEnded(reason)
        files = nil
        if joinWaiter != nil { return failJoin(ProtocolError(.handshakeTimeout, "the connection ended before the server welcomed us: \(reason)")) }
        guard wasJoined else { return } // a failed join is connect()'s to report (or to retry)
        if finishing && everythingDelivered {
            return end(.finished)
        }
        onEvent(.disconnected(reason: reason.description))
        // A server that says GOODBYE is leaving on purpose; only a lost connection is retried.
        if case .goodbye = reason { return end(.closedByServer(reason.description)) }
        guard options.reconnect, !stopped else {
            return end(reason.isOrderly || stopped ? .closedByServer(reason.description) : .failed(reason.description))
        }
        Task { await reconnect() }
    }

    /// Tries again after 1, 2, 4 ... seconds up to the maximum; gives up when the attempt
    /// after the maximum delay fails too.
    private func reconnect() async {
        var backoff = ExponentialBackoff(initial: options.backoffInitial, maximum: options.backoffMaximum)
        var attempts = 1
        var base = options.backoffInitial
        while base < options.backoffMaximum { base *= 2; attempts += 1 }
        let allowed = attempts
        for attempt in 1...allowed {
            let delay = backoff.nextDelay()
            onEvent(.reconnecting(after: delay, attempt: attempt))
            await scheduler.sleep(for: delay)
            if queue.sync(execute: { isOver }) { return }
            do {
                try await connect()
                return
            } catch {
                onEvent(.reconnectFailed("\(error)"))
            }
        }
        queue.async { [self] in
            guard !isOver else { return }
            stopped = true
            for entry in unacknowledged { onEvent(.notSent(describe(entry.command) + " (sent, but the server never confirmed it)")) }
            for command in pendingLines { onEvent(.notSent(describe(command))) }
            for path in pendingFiles { onEvent(.notSent("file \(path)")) }
            unacknowledged = []
            pendingLines = []
            pendingFiles = []
            end(.failed("gave up reconnecting after \(allowed) attempts"))
        }
    }

    private func end(_ result: Outcome) {
        guard !isOver else { return }
        self.result = result
        outcome?.resume(returning: result)
        outcome = nil
        link?.connection.close()
    }

    private func describe(_ command: RoomCommand) -> String {
        switch command {
        case .say(let text): text
        case .message(let to, let text): "/msg \(to) \(text)"
        case .who: "/who"
        case .send(_, let path): "/send \(path)"
        case .help: "/help"
        }
    }
}
