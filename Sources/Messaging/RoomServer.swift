import Glibc
import MessagingCore
import RoomCodeExchange
import TransportCore
import TransportPOSIX

/// The publisher's side of a room: accepts peers, makes their names unique, relays text to
/// everyone or to one member, announces who joins and leaves, receives files, and relays
/// files between members (`FileRelay`).
///
/// - Important: every method runs on `scheduler` (in the tools: the event loop its
///   connections live on), except `closeAll`. Events come through `events`, an async
///   sequence with back-pressure.
public final class RoomServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var name: String
        /// Answer each text with the same text, to its sender alone.
        public var echo = false
        /// Events `events` keeps for a slow consumer before the room stops reading from its
        /// members; it reads again once half of them were taken.
        public var eventBufferLimit = 256
        /// Members at most; more are refused with `server-full`.
        public var maximumMembers = 1000
        /// Connections that have not completed HELLO, at most; more are closed at once with
        /// `server-full`.
        public var maximumPendingConnections = 512
        /// Once more than half of `maximumPendingConnections` are waiting for HELLO, a host (an
        /// IPv4 address or an IPv6 /64) gets no more than this many waiting, so one host cannot
        /// take every place from the others (a host joining many members at once, as a
        /// benchmark does, is not held back while the server keeps up).
        public var maximumPendingPerHostUnderLoad = 8
        /// Once the room is half full, a host (see above) with this many members gets no more:
        /// one host cannot take every place (a load generator sets it as high as it needs).
        public var maximumMembersPerHostUnderLoad = 64
        public var handshakeTimeout: Duration = .seconds(10)
        public var heartbeatInterval: Duration = .seconds(15)
        /// How long a member may keep more than 1 MiB waiting while the operator's input
        /// waits for it (see `send`); it is dropped with `too-slow` then.
        public var slowMemberTimeout: Duration = .seconds(30)
        /// All connections' outboxes together: past it, the members holding the most (each
        /// more than `RoomServer.outboxFloor`) are dropped with `too-slow` until they are under
        /// it (see `boundOutboxes`). Each connection has its own 4 MiB limit besides.
        public var roomOutboxLimit = 256 << 20
        /// Where received files go; nil refuses files.
        public var inbox: Inbox?
        /// Relayed files one member may be receiving at once (its sending counts toward the
        /// inbox's `transfersPerMember`, also without an inbox: 4).
        public var relayedFilesPerRecipient = 4
        /// Relayed files in the room at once, and from one host at once.
        public var relayedFiles = 32
        public var relayedFilesPerHost = 16
        /// Lines to everyone kept for members who join later (0 keeps none; at most
        /// `RoomHistory.maximumLines`). Private lines are never kept.
        public var historyLength = 20
        /// The server's own key (its TLS identity), shown beside its name in PRESENCE; nil
        /// when it runs without TLS.
        public var ownKey: PublicKeyFingerprint?
        /// Names bound to members' keys at most, for the room's life (see `NameBindings`); a
        /// member that would need one more is refused with `server-full`.
        public var maximumBoundNames = 4096
        /// ... and at most this many bound by the members of one address (exact: a whole IPv6 LAN shares one /64).
        public var maximumBoundNamesPerHost = 64
        /// How long a member must stay for its name to stay bound to its key while it is away
        /// (a member that leaves sooner lets the name go: see `NameBindings`).
        public var boundNameSettling: Duration = .seconds(20)
        /// The room code a member may prove with the room-code exchange before its HELLO
        /// (docs/PROTOCOL.md, *Room codes*); nil: the room has none, and a CODE_START is refused.
        public var roomCode: RoomCode?
        /// Who may join (decided at HELLO; see `Admission`): refused keys get `code-required`
        /// or `not-admitted`.
        public var admission: Admission = .open
        /// The members the room knows by key: `admission` reads it, and a key that passes the
        /// room code is added to it under the name it got. Nil: nobody is listed.
        public var members: (any MemberDirectory)?
        /// How many room-code guesses an address, a key and the room get (`GuessLimiter`).
        public var guessLimits = GuessLimiter.Limits()

        public init(name: String) { self.name = name }
    }

    /// What happened in the room, for the tool to print.
    public enum Event: Sendable {
        /// A member joined; `id` is its member number (1, 2, ... in the order members joined:
        /// refused connections and probes get none). `session` is its secure link's key and
        /// safety code, nil for a plaintext member.
        case joined(id: Int, name: String, peer: String, session: SecureSession?)
        case left(id: Int, name: String, reason: String)
        /// A connection that never became a member (bad handshake, refused, ...); not for a
        /// probe (GOODBYE instead of HELLO), which is counted and reported only in a flood.
        case refused(peer: String, reason: String)
        /// Text from a member; `to` is nil for everyone.
        case text(from: String, to: String?, text: String)
        case file(from: String, FileTransfers.Event)
        case fileSent(to: String, Result<FileTransfers.SentFile, FileError>)
        /// Something the operator should know (e.g. a line that could not be sent).
        case note(String)
        /// A room-code attempt failed: a wrong code, a relay in between, or a member that left
        /// in the middle of the exchange. `key` is the connection's key.
        case roomCodeFailed(peer: String, key: PublicKeyFingerprint?, reason: String)
    }

    var options: Options
    /// The events on their way to the consumer (`events`).
    let eventBuffer: EventBuffer<Event>
    let scheduler: any Scheduler
    private let fileWork: (any Executor)?
    var roster = Roster()
    private var sessions = TextSessions()
    private var bindings: NameBindings
    private var history: RoomHistory
    /// Every connection, by a number of its own (members get a member number only when they join).
    var members: [Int: Member] = [:]
    /// The operator's `send`s waiting for members' outboxes, in order.
    let senders = PendingSends<PendingSend>()
    /// Members whose outbox drain a waiting send watches.
    var senderWatches: Set<Int> = []
    /// When the oldest waiting send will have waited `slowMemberTimeout`.
    var slowMemberCheck: (any ScheduledWork)?
    /// Set while the event buffer presses, for when the consumer has taken nothing for
    /// `consumerStallLimit` (`RoomServer+Stall.swift`).
    var stallCheck: (any ScheduledWork)?
    /// The consumer took nothing for `consumerStallLimit` while the buffer pressed: members no
    /// longer count as heard from while unread, and newcomers are refused at once.
    var consumerStalled = false
    /// `closeAll` began: `send` takes nothing more.
    var isClosing = false
    private var nextID = 1
    /// A check of all outboxes together is due at the end of this turn (`boundOutboxes`).
    var outboxCheckScheduled = false
    /// What all members' outboxes hold, as last counted: exact after each check, raised by
    /// each send since (`queued(for:)`), never less than they hold but for one turn's growth.
    var countedOutboxBytes = 0
    /// How many times all outboxes were added up (`boundOutboxes`), each a pass over every
    /// member: what a peer's sends may cost the room grows with it.
    var outboxChecks = 0
    /// The member number the next member that joins gets (#1, #2, ...).
    private var nextMemberNumber = 1
    /// Lines about refused connections, members' ERROR frames and refused file offers: a flood
    /// of any prints 20 lines in 10 s and then one line with how many more there were.
    private let refusals: LimitedReports
    private let peerErrors: LimitedReports
    private let fileRefusals: LimitedReports
    /// Lines about files members send to the inbox (receiving, stored): a member can send
    /// tiny files by the thousand.
    private let receivedFiles: LimitedReports
    /// Failed room-code attempts, reported 20 in 10 s and then counted.
    let codeFailures: LimitedReports
    /// Room-code guesses by address, key and in all.
    var guesses: GuessLimiter
    /// Probes (a GOODBYE instead of HELLO: `svc-browse --verify`) are not reported one by one;
    /// more than 20 in 10 s get a line with the count, so a flood of them is still seen.
    private let probes: LimitedReports
    /// The neighbour table could not be read once: said once, not per guess (`codeHost`).
    var neighbourTableFailed = false
    /// Connections that have not said HELLO yet, per host (see `SocketEndpoint.hostKey`).
    private var pendingByHost: [String: Int] = [:]
    private var pendingCount = 0
    /// Connections counted as pending, oldest first, by id (some may have left since:
    /// skipped; ids, so that a member that left is not kept alive here).
    private var pendingOrder: [Int] = []
    private var pendingOrderStart = 0
    /// Members per host.
    private var membersByHost: [String: Int] = [:]
    /// Files between members.
    private let relay: FileRelay

    final class Member {
        let id: Int
        let link: PeerLink
        let peer: String
        let host: String
        /// Its exact address (IPv4-mapped as IPv4): what names bound to keys are counted by,
        /// since a whole IPv6 LAN shares one /64 (`host`).
        let address: String
        /// Whether it counts among the connections that have not said HELLO.
        var isPending = true
        /// Its member number, once it joined (probes and refused connections get none).
        var number: Int?
        /// While its outbox holds more than `outboxFloor`: the link's `sentByteCount` when the
        /// room last saw it move, and when (see `boundOutboxes`).
        var outboxProgress: (sent: Int, at: ContinuousClock.Instant)?
        /// What its outbox held when last read into `countedOutboxBytes`.
        var countedOutbox = 0
        /// It said GOODBYE instead of HELLO: it only checked that the room answers.
        var isProbe = false
        var name: String?
        /// Its secure link's key and safety code, read when it said HELLO; nil for plaintext.
        var secure: SecureSession?
        /// Its key's full form: what its name, text session and files belong to.
        var key: String? { secure?.peerKey.full }
        /// A newer connection of the same key took its name: it is leaving without a trace.
        var replaced = false
        var files: FileTransfers?
        /// Set by SESSION: this member's TEXT frames are numbered from `nextSequence` on.
        var session: UInt64?
        var nextSequence: UInt64 = 0
        /// Where it stands in the room-code exchange, and the exchange while it runs.
        var codeSteps: RoomCodeResponderSteps
        var responder: CPace.Responder?
        /// Its guess, counted by `guesses` (given back when it proves the code).
        var codeAttempt: GuessLimiter.Attempt?
        /// For a link-local peer: its neighbour entry as read at accept, read again at its
        /// CODE_START (`NeighbourAttribution`); nil when not read (its guesses then count by
        /// exact address).
        var neighbour: Result<NeighbourTable.Accepted, TransportError>?
        init(id: Int, link: PeerLink, peer: String, host: String, address: String, roomCode: RoomCode?) {
            codeSteps = RoomCodeResponderSteps(unavailable: roomCode == nil ? "this room has no room code: join without --room-code" : nil)
            self.id = id
            self.link = link
            self.peer = peer
            self.host = host
            self.address = address
        }
    }

    /// - Parameters:
    ///   - scheduler: where everything runs, the members' timers too: the event loop of the
    ///     connections handed to `accept(_:)`. Tests and fuzzers pass a manual clock and hand
    ///     over in-memory streams.
    ///   - fileWork: where received files are written and hashed; nil for a queue of each
    ///     member's own.
    public convenience init(options: Options, scheduler: any Scheduler, fileWork: (any Executor)? = nil) {
        self.init(options: options, scheduler: scheduler, fileWork: fileWork, hook: nil)
    }

    /// A room whose events all go to `onEvent` at once, on `scheduler`, with no buffer and no
    /// back-pressure: for white-box tests and the fuzz target, which drive the room
    /// synchronously. The public API is `events`.
    package convenience init(options: Options, scheduler: any Scheduler, fileWork: (any Executor)? = nil,
                             onEvent: @escaping (Event) -> Void) {
        self.init(options: options, scheduler: scheduler, fileWork: fileWork, hook: onEvent)
    }

    private init(options: Options, scheduler: any Scheduler, fileWork: (any Executor)?, hook: ((Event) -> Void)?) {
        self.options = options
        history = RoomHistory(capacity: options.historyLength)
        bindings = NameBindings(capacity: options.maximumBoundNames, perHost: options.maximumBoundNamesPerHost,
                                settling: options.boundNameSettling)
        self.scheduler = scheduler
        self.fileWork = fileWork
        let eventBuffer = EventBuffer<Event>(limit: options.eventBufferLimit, hook: hook)
        self.eventBuffer = eventBuffer
        // 20 lines in 10 s each, then one with the count; the summaries capture only the buffer.
        func reports(_ what: String) -> LimitedReports {
            LimitedReports(scheduler: scheduler) { count in
                eventBuffer.yield(.note("not shown one by one in the last 10 s: \(what), \(count) more"))
            }
        }
        refusals = reports("refused connections")
        peerErrors = reports("ERROR frames from members")
        fileRefusals = reports("refused or failed file offers")
        receivedFiles = reports("files received from members (receiving and stored)")
        codeFailures = reports("failed room-code attempts")
        guesses = GuessLimiter(limits: options.guessLimits)
        let inboxLimits = options.inbox?.limits ?? Inbox.Limits()
        relay = FileRelay(limits: .init(fromMember: inboxLimits.transfersPerMember, toMember: options.relayedFilesPerRecipient,
                                        fromHost: options.relayedFilesPerHost, transfers: options.relayedFiles,
                                        idleTimeout: inboxLimits.transferIdleTimeout, minimumProgress: inboxLimits.transferMinimumProgress),
                          scheduler: scheduler)
        probes = LimitedReports(scheduler: scheduler) { count in
            eventBuffer.yield(.note("more than 20 connections in the last 10 s only checked that the room answers (as svc-browse --verify does): \(count) beyond the first 20"))
        }
        // A full buffer stops reading from every member (and from those who come meanwhile),
        // for a bounded time (`consumerPressure`).
        eventBuffer.pressure = { [weak self] full in self?.consumerPressure(full) }
    }

    /// Hands an event to the consumer (`events`). On the scheduler.
    func onEvent(_ event: Event) {
        scheduler.assertOnExecutor()
        eventBuffer.yield(event)
    }

    /// The server's name changed (the service was renamed).
    public func rename(_ name: String) {
        scheduler.assertOnExecutor()
        options.name = name
    }

    /// Files being relayed between members now (each is bounded; see `FileRelay`).
    public var relayedTransferCount: Int { relay.count }

    /// The members' names, the server first.
    public var names: [String] { [options.name] + roster.names }

    /// Takes a new stream (its handlers run on the server's scheduler): greets it at once
    /// and waits for its `HELLO`. A host with too many connections that have not said HELLO
    /// (or too many overall) is told so and closed.
    /// - Parameter neighbour: for a link-local peer, its neighbour entry as read at accept
    ///   (`NeighbourTable.atAccept`), which room-code guesses are charged by; nil for others.
    public func accept(_ stream: any ByteStream, neighbour: Result<NeighbourTable.Accepted, TransportError>? = nil) {
        scheduler.assertOnExecutor()
        let link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: options.handshakeTimeout,
                            heartbeatInterval: options.heartbeatInterval)
        let host = stream.peer?.hostKey ?? "unknown"
        let address = stream.peer.map { $0.address.unmappedIPv4?.description ?? $0.addressWithScope } ?? "unknown"
        let member = Member(id: nextID, link: link, peer: stream.peer?.description ?? "an unknown address", host: host, address: address,
                            roomCode: options.roomCode)
        link.heldForConsumerCountsAsHeard = !consumerStalled
        member.neighbour = neighbour
        nextID += 1
        members[member.id] = member
        // Whatever the link sends counts toward the room's outbox bound: answers to pings,
        // acknowledgements, PRESENCE for WHO, relayed file data.
        link.onQueued = { [weak self, weak member] in
            if let self, let member { queued(for: member) }
        }
        link.start(onMessage: { [self] message in received(message, from: member) },
                   onEnd: { [self] reason in ended(member, reason) })
        // A consumer behind: nobody's frames are read until it catches up.
        if eventBuffer.isPressing { link.holdReading(.consumer) }
        link.send(.hello(.init(name: options.name)))
        let fromHost = pendingByHost[host, default: 0]
        pendingByHost[host] = fromHost + 1
        pendingCount += 1
        pendingOrder.append(member.id)
        if consumerStalled {
            // Held at once and never read: it would only time out in the handshake.
            leftPending(member)
            link.reject(ProtocolError(.serverFull, Self.stalledRefusal))
        } else if fromHost >= options.maximumPendingPerHostUnderLoad && pendingCount > options.maximumPendingConnections / 2 {
            leftPending(member)
            link.reject(ProtocolError(.serverFull, "too many connections from \(host) have not said HELLO yet (\(fromHost)); try again later"))
        } else if pendingCount > options.maximumPendingConnections {
            // The oldest goes, not the newcomer: a real client says HELLO within a round trip,
            // so whoever holds places by saying nothing loses them to those who arrive.
            closeOldestPending()
        }
    }

    /// Closes the connection that has waited longest without saying HELLO.
    private func closeOldestPending() {
        while pendingOrderStart < pendingOrder.count {
            let id = pendingOrder[pendingOrderStart]
            pendingOrderStart += 1
            guard let oldest = members[id], oldest.isPending else { continue }
            leftPending(oldest)
            oldest.link.reject(ProtocolError(.serverFull,
                "too many connections have not said HELLO (at most \(options.maximumPendingConnections)); the one that waited longest is closed"))
            break
        }
        compactPendingOrder()
    }

    private func compactPendingOrder() {
        if pendingOrderStart > 1024 && pendingOrderStart * 2 > pendingOrder.count {
            pendingOrder.removeFirst(pendingOrderStart)
            pendingOrderStart = 0
        }
    }

    /// The connection said HELLO, was closed for waiting too long, or ended before it did.
    private func leftPending(_ member: Member) {
        guard member.isPending else { return }
        member.isPending = false
        pendingCount -= 1
        let count = pendingByHost[member.host, default: 1] - 1
        pendingByHost[member.host] = count > 0 ? count : nil
        while pendingOrderStart < pendingOrder.count, members[pendingOrder[pendingOrderStart]]?.isPending != true { pendingOrderStart += 1 }
        compactPendingOrder()
    }

    private func received(_ message: Message, from member: Member) {
        guard !member.replaced else { return }
        guard let name = member.name else { return handshake(message, from: member) }
        if relay.handle(message, from: member.id) { return }
        switch message {
        case .fileOfferTo(let offer, let to) where MemberName.same(to, options.name):
            // To the server itself: its inbox (refused as a FILE_OFFER would be, or taken, with
            // the whole file's credit given at once).
            guard let files = member.files, !relay.isSending(offer.id, from: member.id) else { return received(.fileOffer(offer), from: member) }
            return files.receivedOfferToThisSide(offer)
        case .fileOfferTo(let offer, _) where member.files?.incoming[offer.id] != nil:
            member.link.send(.fileResult(id: offer.id, status: .refused, message: "transfer id \(offer.id) is already in use"))
            return
        case .fileOfferTo(let offer, let to):
            return relay.offer(offer, from: member.id, to: roster.id(named: to), named: to,
                               otherTransfers: member.files?.incoming.count ?? 0)
        case .fileOfferFrom:
            return member.link.reject(ProtocolError(.fileProtocol, "FILE_OFFER_FROM comes from a server only; send FILE_OFFER_TO"))
        case .fileCredit:
            return member.link.reject(ProtocolError(.fileProtocol, "FILE_CREDIT comes from a server only"))
        case .fileOffer(let offer) where relay.isSending(offer.id, from: member.id):
            member.link.send(.fileResult(id: offer.id, status: .refused, message: "transfer id \(offer.id) is already in use"))
            return
        default: break
        }
        if let files = member.files, files.handle(message) { return }
        switch message {
        case .session(let id, let next):
            guard member.session == nil else {
                return member.link.reject(ProtocolError(.malformedFrame, "SESSION was already received on this connection"))
            }
            do throws(TextSessions.Refusal) {
                try sessions.attach(id, owner: member.key, next: next, holder: member.id, address: member.host)
            } catch .inUse {
                return member.link.reject(ProtocolError(.malformedFrame, "session \(id) is in use by another connection"))
            } catch {
                return member.link.reject(ProtocolError(.malformedFrame, "SESSION next \(next) is not below 2^63"))
            }
            member.session = id
            member.nextSequence = next
        case .text(_, let to, let text):
            if let session = member.session {
                let sequence = member.nextSequence
                member.nextSequence = min(sequence, TextSessions.sequenceLimit - 1) + 1
                defer { member.link.send(.acknowledged(through: member.nextSequence)) }
                guard sessions.accept(sequence, in: session, owner: member.key) else { return } // relayed before the connection broke
            }
            if to.isEmpty {
                broadcast(.text(from: name, to: "", text: text), except: member.id)
                remember(from: name, text: text)
                // The answer before the event: a consumer on the loop prints after the
                // iteration's sends are written (EventLoop as a task executor).
                if options.echo { member.link.send(.text(from: options.name, to: name, text: text)) }
                onEvent(.text(from: name, to: nil, text: text))
            } else if MemberName.same(to, options.name) {
                if options.echo { member.link.send(.text(from: options.name, to: name, text: text)) }
                onEvent(.text(from: name, to: options.name, text: text))
            } else if let id = roster.id(named: to), let target = members[id] {
                target.link.send(.text(from: name, to: target.name ?? to, text: text))
                onEvent(.text(from: name, to: target.name, text: text))
            } else {
                member.link.reject(ProtocolError(.unknownPeer, "nobody called '\(to)' is in the room; /who lists the members"))
            }
        case .who: sendPresence(to: member)
        case .hello: member.link.reject(ProtocolError(.malformedFrame, "HELLO was already received"))
        case .codeStart, .codeReply, .codeConfirm:
            if case .refuse(let error) = member.codeSteps.receive(message) { member.link.reject(error) }
        case .error(let code, let text):
            if peerErrors.admit() { onEvent(.note("\(name) reported \(ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"): \(text)")) }
        case .goodbye, .welcome, .presence, .presenceWithKeys, .acknowledged, .history, .ping, .pong, .fileOffer, .fileAccept, .fileChunk, .fileEnd, .fileResult,
             .fileOfferTo, .fileOfferFrom, .fileCancel, .fileCredit: break
        }
    }

    private func handshake(_ message: Message, from member: Member) {
        guard !member.isProbe else { return } // what a probe sends after its GOODBYE is ignored
        var passedCode = false
        switch member.codeSteps.receive(message) {
        case .answer(let share, let data): return answerRoomCode(share: share, associatedData: data, from: member)
        case .check(let tag): return checkRoomCode(tag: tag, from: member)
        case .peerFailed: return roomCodeFailed(member, "the member's side found the code wrong (or a relay in between)")
        case .refuse(let error): return member.link.reject(error)
        case .ignore: return
        case .hello(_, let passed): passedCode = passed
        case .other: break
        }
        if case .goodbye = message {
            // A probe: it has read our HELLO and leaves without joining. Until it is gone it
            // counts as pending like any connection that has not said HELLO.
            member.isProbe = true
            return member.link.goodbye("only checked that the room answers")
        }
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
        member.secure = member.link.connection.secureSession
        let key = member.key
        let listing = member.secure.flatMap { options.members?.listing(for: $0.peerKey) }
        if let refusal = options.admission.refusal(key: member.secure?.peerKey.short, listed: listing != nil, passedCode: passedCode) {
            return member.link.reject(refusal)
        }
        // Only listed members get in with `known`: the name they are listed under wins.
        let requested = options.admission == .known ? listing?.name ?? hello.name : hello.name
        // The same key asking again for a name it holds: the new connection takes the old one's place.
        let replaced = key.flatMap { key in
            roster.id(named: requested).flatMap { members[$0] }.flatMap { $0.key == key ? $0 : nil }
        }
        if replaced == nil {
            guard roster.count < options.maximumMembers else {
                return member.link.reject(ProtocolError(.serverFull, "the room is full: it has \(counted(options.maximumMembers, "member")); try again later"))
            }
            let fromHost = membersByHost[member.host, default: 0]
            guard fromHost < options.maximumMembersPerHostUnderLoad || roster.count < options.maximumMembers / 2 else {
                return member.link.reject(ProtocolError(.serverFull,
                    "the room is more than half full and \(counted(fromHost, "member")) already came from \(member.host); try again later"))
            }
        }
        // Reads the live table (a captured copy would be copied whole again by `bind` below).
        // A name the members file lists for another key is that key's, from the room's start.
        let ownKey = member.secure?.peerKey
        let isTaken = { [unowned self] (comparisonKey: String) in
            bindings.isTaken(comparisonKey, by: key) || options.members?.holder(ofName: comparisonKey).map { $0 != ownKey } ?? false
        }
        let name = replaced?.name ?? roster.availableName(requested: requested, reserved: [options.name], isTaken: isTaken)
        if let key {
            do throws(NameBindings.Refusal) {
                try bindings.bind(MemberName.comparisonKey(name), to: key, host: member.address, at: scheduler.now)
            } catch .roomFull {
                return member.link.reject(ProtocolError(.serverFull,
                    "the room has bound \(counted(bindings.capacity, "name")) to keys, all of members in the room: a key that has a name here may join with it; try again once someone left"))
            } catch {
                return member.link.reject(ProtocolError(.serverFull,
                    "\(counted(bindings.perHost, "name")) are bound to keys of members from \(member.address), all in the room, the most one address may bind: join with a name your key already has here, or once one of them left"))
            }
        }
        if let replaced { replace(replaced) }
        leftPending(member)
        membersByHost[member.host, default: 0] += 1
        let number = nextMemberNumber
        nextMemberNumber += 1
        member.number = number
        _ = roster.join(id: member.id, requested: name, reserved: [options.name], isTaken: isTaken)
        member.name = name
        member.link.handshakeCompleted()
        member.codeSteps.joined()
        // The server's own offers take the lower half of the ids; relayed ones the upper.
        let files = FileTransfers(link: member.link, inbox: options.inbox, disk: fileWork, hashing: fileWork,
                                  ids: 1...((1 << 31) - 1)) { [self] event in
            switch event {
            case .receiveFailed: if fileRefusals.admit() { onEvent(.file(from: name, event)) }
            case .receiving, .stored: if receivedFiles.admit() { onEvent(.file(from: name, event)) }
            default: onEvent(.file(from: name, event))
            }
        }
        files.otherTransfers = { [relay, id = member.id] in relay.sending(from: id) }
        member.files = files
        relay.joined(member.id, link: member.link, name: name, host: member.host, key: key, capabilities: hello.capabilities)
        member.link.send(.welcome(name: name))
        sendPresence(to: member)
        if hello.capabilities.contains(.history) {
            for line in history.lines { member.link.send(.history(time: line.time, from: line.from, text: line.text)) }
        }
        // A replacement keeps the name and the key the room already sees: nothing to announce.
        if replaced == nil { broadcastPresence(.joined, of: member) }
        onEvent(.joined(id: number, name: name, peer: member.peer, session: member.secure))
        if passedCode, listing == nil, let peerKey = member.secure?.peerKey, let problem = options.members?.add(peerKey, name: name) {
            onEvent(.note("\(name) (key \(peerKey.short)) passed the room code but could not be remembered, so it needs the code again next time: \(problem)"))
        }
    }

    /// A newer connection of the same key asked for `old`'s name: `old` is told why and closed,
    /// and leaves the roster at once, without a `left` for the room (the name stays, with the
    /// same key); its text session is let go so the new connection can take it up.
    private func replace(_ old: Member) {
        let reason = "replaced by a new connection of the same key"
        old.replaced = true
        roster.leave(id: old.id)
        let count = membersByHost[old.host, default: 1] - 1
        membersByHost[old.host] = count > 0 ? count : nil
        if let session = old.session { sessions.detach(session, owner: old.key, holder: old.id) }
        old.session = nil
        relay.left(old.id)
        if let number = old.number, let name = old.name { onEvent(.left(id: number, name: name, reason: reason)) }
        old.link.goodbye(reason)
    }

    private func ended(_ member: Member, _ reason: PeerLink.EndReason) {
        members[member.id] = nil
        forgetOutbox(of: member)
        sendersLose(member, reason)
        if member.codeSteps.state == .awaitingConfirmation {
            member.codeSteps.failed()
            member.responder = nil
            roomCodeFailed(member, "the connection ended before the member confirmed (\(reason))")
        }
        leftPending(member)
        if let session = member.session { sessions.detach(session, owner: member.key, holder: member.id) }
        member.files?.linkEnded(reason)
        relay.left(member.id)
        guard !member.replaced else { return } // its leaving was handled when it was replaced
        guard let name = roster.leave(id: member.id), let number = member.number else {
            if member.isProbe {
                _ = probes.admit() // counted: only a flood of probes is reported
            } else if refusals.admit() {
                onEvent(.refused(peer: member.peer, reason: reason.description))
            }
            return
        }
        let count = membersByHost[member.host, default: 1] - 1
        membersByHost[member.host] = count > 0 ? count : nil
        if let key = member.key { bindings.left(MemberName.comparisonKey(name), key: key, at: scheduler.now) }
        broadcastPresence(.left, of: member)
        onEvent(.left(id: number, name: name, reason: reason.description))
    }

    /// The PRESENCE list, the server first, in as many frames as it takes (a room of
    /// thousands passes 1 MiB); with keys when the member's link uses them.
    private func sendPresence(to member: Member) {
        let messages: [Message]
        if member.link.usesMemberKeys {
            let entries = [Message.PresenceMember(name: options.name, key: options.ownKey?.bytes)] + roster.entries.map { entry in
                Message.PresenceMember(name: entry.name, key: members[entry.id]?.secure?.peerKey.bytes)
            }
            messages = Message.presenceWithKeys(.list, splitting: entries)
        } else {
            messages = Message.presence(.list, splitting: names)
        }
        for message in messages { member.link.send(message) }
    }

    /// Tells every other member that `member` joined or left, with its key to those whose
    /// links use keys.
    private func broadcastPresence(_ kind: Message.PresenceKind, of member: Member) {
        guard let name = member.name else { return }
        let withKeys = Message.presenceWithKeys(kind, members: [.init(name: name, key: member.secure?.peerKey.bytes)])
        var plainBytes: [UInt8] = []
        var keyedBytes: [UInt8] = []
        // A name is at most 255 bytes: both fit in a frame.
        Message.presence(kind, names: [name]).encode(into: &plainBytes)
        withKeys.encode(into: &keyedBytes)
        for other in members.values where other.id != member.id && other.name != nil && !other.replaced && other.link.isOpen {
            other.link.connection.send(other.link.usesMemberKeys ? keyedBytes : plainBytes)
            queued(for: other)
        }
    }

    private func broadcast(_ message: Message, except excluded: Int? = nil) {
        var bytes: [UInt8] = []
        guard message.encode(into: &bytes) else {
            return onEvent(.note("a message was not relayed: it does not fit in a frame"))
        }
        // A member whose connection is closing misses it; its `left` line follows.
        for member in members.values where member.id != excluded && member.name != nil && member.link.isOpen {
            member.link.connection.send(bytes)
            queued(for: member)
        }
    }

    /// A line from the operator: text for everyone, or a command (see `RoomCommand`), done at
    /// once, however full the members' outboxes are (`send` waits for them).
    public func perform(_ command: RoomCommand) {
        scheduler.assertOnExecutor()
        switch command {
        case .say(let text):
            guard roster.count > 0 else { return onEvent(.note("nobody is in the room; the line was not sent")) }
            broadcast(.text(from: options.name, to: "", text: text))
            remember(from: options.name, text: text)
            onEvent(.text(from: options.name, to: nil, text: text))
        case .message(let to, _) where MemberName.same(to, options.name), .send(let to?, _) where MemberName.same(to, options.name):
            onEvent(.note("'\(to)' is this room's own name; /msg and /send go to a member (/who lists them)"))
        case .message(let to, let text):
            guard let id = roster.id(named: to), let member = members[id] else {
                return onEvent(.note("nobody called '\(to)' is in the room; the line was not sent"))
            }
            member.link.send(.text(from: options.name, to: member.name ?? to, text: text))
            onEvent(.text(from: options.name, to: member.name ?? to, text: text))
        case .who:
            let listed = roster.entries.map { entry in
                members[entry.id]?.secure.map { "\(entry.name) (key \($0.peerKey.short))" } ?? entry.name
            }
            onEvent(.note("in the room: " + ([options.name] + listed).joined(separator: ", ")))
        case .send(let to, let path):
            guard let to, let id = roster.id(named: to), let member = members[id], let files = member.files else {
                return onEvent(.note("nobody called '\(to ?? "")' is in the room; nothing was sent"))
            }
            let name = member.name ?? to
            files.send(path: path) { [self] result in onEvent(.fileSent(to: name, result)) }
        case .help:
            onEvent(.note(RoomCommand.publisherSummary))
        case .quit:
            break // leaving is the tool's to do (svc-publish stops); the room has nothing to send
        }
    }

    /// Keeps a line said to everyone for members who join later.
    private func remember(from name: String, text: String) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(clamping: now.tv_sec) &* 1000 &+ UInt64(clamping: now.tv_nsec / 1_000_000)
        history.append(.init(time: milliseconds, from: name, text: text))
    }

    /// Says goodbye to every member and waits until they are gone or `timeout` passed; then
    /// `events` ends (after what was buffered).
    public func closeAll(within timeout: Duration) async {
        await scheduler.submit { [self] in
            isClosing = true
            failSenders()
            members.values.forEach { $0.link.goodbye("the server is shutting down") }
        }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !(await scheduler.submit { [self] in members.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        // The room is over: the consumer gets what is buffered, then the end.
        await scheduler.submit { [self] in eventBuffer.finish() }
    }
}
