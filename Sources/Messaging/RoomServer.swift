import Dispatch
import MessagingCore
import TransportCore
import TransportPOSIX

/// The publisher's side of a room: accepts peers, makes their names unique, relays text to
/// everyone or to one member, announces who joins and leaves, and receives files.
///
/// - Important: every method runs on `queue`, except `closeAll`; events are delivered there.
public final class RoomServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var name: String
        /// Answer each text with the same text, to its sender alone.
        public var echo = false
        /// Members at most; more are refused with `server-full`.
        public var maximumMembers = 1000
        public var handshakeTimeout: Duration = .seconds(10)
        public var heartbeatInterval: Duration = .seconds(15)
        /// Where received files go; nil refuses files.
        public var inbox: Inbox?

        public init(name: String) { self.name = name }
    }

    /// What happened in the room, for the tool to print.
    public enum Event: Sendable {
        case joined(id: Int, name: String, peer: String)
        case left(id: Int, name: String, reason: String)
        /// A connection that never became a member (bad handshake, refused, ...).
        case refused(peer: String, reason: String)
        /// Text from a member; `to` is nil for everyone.
        case text(from: String, to: String?, text: String)
        case file(from: String, FileTransfers.Event)
        case fileSent(to: String, Result<FileTransfers.SentFile, FileError>)
        /// Something the operator should know (e.g. a line that could not be sent).
        case note(String)
    }

    private var options: Options
    public let queue: DispatchQueue
    private let onEvent: (Event) -> Void
    private let scheduler: any Scheduler
    private let fileWork: (any Executor)?
    private var roster = Roster()
    private var sessions = TextSessions()
    private var members: [Int: Member] = [:]
    private var nextID = 1

    private final class Member {
        let id: Int
        let link: PeerLink
        let peer: String
        var name: String?
        var files: FileTransfers?
        /// Set by SESSION: this member's TEXT frames are numbered from `nextSequence` on.
        var session: UInt64?
        var nextSequence: UInt64 = 0
        init(id: Int, link: PeerLink, peer: String) {
            self.id = id
            self.link = link
            self.peer = peer
        }
    }

    /// - Parameters:
    ///   - queue: where everything runs (see `closeAll`).
    ///   - scheduler: the members' timers; nil for Dispatch timers on `queue`. Tests and
    ///     fuzzers pass a manual clock and then hand over in-memory streams (`accept(_:)`).
    ///   - fileWork: where received files are written and hashed; nil for a queue of each
    ///     member's own.
    public init(options: Options, queue: DispatchQueue, scheduler: (any Scheduler)? = nil, fileWork: (any Executor)? = nil,
                onEvent: @escaping (Event) -> Void) {
        self.options = options
        self.queue = queue
        self.scheduler = scheduler ?? DispatchScheduler(queue: queue)
        self.fileWork = fileWork
        self.onEvent = onEvent
    }

    /// The server's name changed (the service was renamed).
    public func rename(_ name: String) { options.name = name }

    /// The members' names, the server first.
    public var names: [String] { [options.name] + roster.names }

    /// Takes a new connection: greets it at once and waits for its `HELLO`.
    public func accept(_ socket: Socket, peer: SocketEndpoint?) {
        accept(Connection(socket: socket, peer: peer, queue: queue))
    }

    /// Takes a new stream (its handlers run on the server's scheduler): greets it at once
    /// and waits for its `HELLO`.
    public func accept(_ stream: any ByteStream) {
        let link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: options.handshakeTimeout,
                            heartbeatInterval: options.heartbeatInterval)
        let member = Member(id: nextID, link: link, peer: stream.peer?.description ?? "an unknown address")
        nextID += 1
        members[member.id] = member
        link.start(onMessage: { [self] message in received(message, from: member) },
                   onEnd: { [self] reason in ended(member, reason) })
        link.send(.hello(.init(name: options.name)))
    }

    private func received(_ message: Message, from member: Member) {
        guard let name = member.name else { return handshake(message, from: member) }
        if let files = member.files, files.handle(message) { return }
        switch message {
        case .session(let id, let next):
            member.session = id
            member.nextSequence = next
            sessions.open(id, next: next)
        case .text(_, let to, let text):
            if let session = member.session {
                let sequence = member.nextSequence
                member.nextSequence += 1
                defer { member.link.send(.acknowledged(through: member.nextSequence)) }
                guard sessions.accept(sequence, in: session) else { return } // relayed before the connection broke
            }
            if to.isEmpty {
                broadcast(.text(from: name, to: "", text: text), except: member.id)
                onEvent(.text(from: name, to: nil, text: text))
                if options.echo { member.link.send(.text(from: options.name, to: name, text: text)) }
            } else if to.lowercased() == options.name.lowercased() {
                onEvent(.text(from: name, to: options.name, text: text))
                if options.echo { member.link.send(.text(from: options.name, to: name, text: text)) }
            } else if let id = roster.id(named: to), let target = members[id] {
                target.link.send(.text(from: name, to: target.name ?? to, text: text))
                onEvent(.text(from: name, to: target.name, text: text))
            } else {
                member.link.reject(ProtocolError(.unknownPeer, "nobody called '\(to)' is in the room; /who lists the members"))
            }
        case .who: member.link.send(.presence(.list, names: names))
        case .hello: member.link.reject(ProtocolError(.malformedFrame, "HELLO was already received"))
        case .error(let code, let text):
            onEvent(.note("\(name) reported \(ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"): \(text)"))
        case .goodbye, .welcome, .presence, .acknowledged, .ping, .pong, .fileOffer, .fileAccept, .fileChunk, .fileEnd, .fileResult: break
        }
    }

    private func handshake(_ message: Message, from member: Member) {
        guard case .hello(let hello) = message else {
            return member.link.reject(ProtocolError(.notHandshaken, "the first frame must be HELLO"))
        }
        guard hello.version == Message.Hello.currentVersion else {
            return member.link.reject(ProtocolError(.unsupportedVersion,
                "this server speaks protocol version \(Message.Hello.currentVersion); the peer sent version \(hello.version)"))
        }
        if let problem = Roster.problem(inName: hello.name) {
            return member.link.reject(ProtocolError(.invalidName, "invalid name: \(problem)"))
        }
        guard roster.count < options.maximumMembers else {
            return member.link.reject(ProtocolError(.serverFull, "the room is full (\(options.maximumMembers) members); try again later"))
        }
        let name = roster.join(id: member.id, requested: hello.name, reserved: [options.name])
        member.name = name
        member.link.handshakeCompleted()
        member.files = FileTransfers(link: member.link, inbox: options.inbox, disk: fileWork, hashing: fileWork) { [self] event in onEvent(.file(from: name, event)) }
        member.link.send(.welcome(name: name))
        member.link.send(.presence(.list, names: names))
        broadcast(.presence(.joined, names: [name]), except: member.id)
        onEvent(.joined(id: member.id, name: name, peer: member.peer))
    }

    private func ended(_ member: Member, _ reason: PeerLink.EndReason) {
        members[member.id] = nil
        member.files?.linkEnded(reason)
        guard let name = roster.leave(id: member.id) else {
            return onEvent(.refused(peer: member.peer, reason: reason.description))
        }
        broadcast(.presence(.left, names: [name]), except: member.id)
        onEvent(.left(id: member.id, name: name, reason: reason.description))
    }

    private func broadcast(_ message: Message, except excluded: Int? = nil) {
        var bytes: [UInt8] = []
        message.encode(into: &bytes)
        for member in members.values where member.id != excluded && member.name != nil {
            if !member.link.connection.send(bytes) {
                onEvent(.note("\(member.name ?? "?") could not take the message: its connection is closing"))
            }
        }
    }

    /// A line from the operator: text for everyone, or a command (see `RoomCommand`).
    public func perform(_ command: RoomCommand) {
        switch command {
        case .say(let text):
            guard roster.count > 0 else { return onEvent(.note("nobody is in the room; the line was not sent")) }
            broadcast(.text(from: options.name, to: "", text: text))
        case .message(let to, let text):
            guard let id = roster.id(named: to), let member = members[id] else {
                return onEvent(.note("nobody called '\(to)' is in the room; the line was not sent"))
            }
            member.link.send(.text(from: options.name, to: member.name ?? to, text: text))
        case .who:
            onEvent(.note("in the room: " + names.joined(separator: ", ")))
        case .send(let to, let path):
            guard let to, let id = roster.id(named: to), let member = members[id], let files = member.files else {
                return onEvent(.note("nobody called '\(to ?? "")' is in the room; nothing was sent"))
            }
            let name = member.name ?? to
            files.send(path: path) { [self] result in onEvent(.fileSent(to: name, result)) }
        case .help:
            onEvent(.note(RoomCommand.summary))
        }
    }

    /// Says goodbye to every member and waits until they are gone or `timeout` passed.
    public func closeAll(within timeout: Duration) async {
        queue.sync { members.values.forEach { $0.link.goodbye("the server is shutting down") } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !queue.sync(execute: { members.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
