import MessagingCore
import TransportCore

extension RoomServer {
    /// A line given to `send` was not sent: the member it was for left while it waited, or
    /// the room is closing.
    public struct SendFailed: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String

        public init(_ message: String) { self.message = message }

        /// `command` was not sent because the room is closing (also for an operator's line
        /// that was read but never given to `send`).
        public static func roomClosing(_ command: RoomCommand) -> SendFailed {
            SendFailed("the room is closing: \(RoomServer.describe(command)) was not sent")
        }

        public var description: String { message }
    }

    /// Bytes waiting in a member's outbox above which `send` waits for it to drain (to this
    /// mark: the member's link wakes the waiting send then, not only once it is empty).
    public static let outboxMark = PeerLink.outboxMark

    /// A `send` waiting for room: its command, the member it is for (a line or a file to one
    /// member), found when it was given, and when it began to wait.
    struct PendingSend {
        let command: RoomCommand
        let recipient: Int?
        let since: ContinuousClock.Instant
    }

    /// Performs an operator's command (`perform`), suspending first while an outbox it goes to
    /// is over `outboxMark`: every member's for a line to everyone, the recipient's for a line
    /// or a file to one member (files then have flow control of their own). Sends wait in
    /// order: a later one never passes an earlier one. Each send waits at most
    /// `Options.slowMemberTimeout`: then the members still over the mark are dropped with
    /// `too-slow` (a member that talks but never reads counts as alive for the heartbeat) and
    /// it goes, so members taking turns over the mark cannot hold it for ever. `/who`, `/help`
    /// and `/quit` need no outbox and never wait. Returns once the command was performed; what
    /// came of it comes as events.
    /// - Throws: `CancellationError` when the task is cancelled while waiting (nothing of the
    ///   command was done); `SendFailed` when its recipient leaves while it waits, or when the
    ///   room is closing (`closeAll`).
    public func send(_ command: RoomCommand) async throws {
        let waiter = SendWaiter()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                scheduler.execute { [self] in
                    guard !isClosing else {
                        return continuation.resume(throwing: SendFailed.roomClosing(command))
                    }
                    let pending = PendingSend(command: command, recipient: recipient(of: command), since: scheduler.now)
                    var tooSlow: [Member] = []
                    defer { drop(tooSlow) }
                    if Self.needsNoOutbox(command) || senders.isEmpty && blockers(of: pending, tooSlow: &tooSlow).isEmpty {
                        perform(command)
                        return continuation.resume()
                    }
                    guard senders.append(waiter, pending, continuation) else { return }
                    watchBlockers(tooSlow: &tooSlow)
                }
            }
        } onCancel: {
            waiter.cancelled.store(true, ordering: .sequentiallyConsistent)
            scheduler.execute { [self] in
                _ = senders.cancel(waiter)
                admitSenders() // the first one may have waited for members the next does not need
            }
        }
    }

    /// The member a command is for, if it names one that is in the room.
    private func recipient(of command: RoomCommand) -> Int? {
        switch command {
        case .message(let to, _), .send(let to?, _): roster.id(named: to)
        case .say, .who, .send(nil, _), .help, .quit: nil
        }
    }

    /// Whether `command` only answers the operator or ends the room: it never waits for outboxes.
    private static func needsNoOutbox(_ command: RoomCommand) -> Bool {
        switch command {
        case .who, .help, .quit: true
        case .say, .message, .send: false
        }
    }

    /// The members whose outboxes a send must wait for now. Members found too slow are added
    /// to `tooSlow` rather than rejected here: rejecting can close a link on the spot (its
    /// error frame overflows the outbox), which re-enters the send queue; the caller drops
    /// them once its check is over (`drop`).
    private func blockers(of pending: PendingSend, tooSlow: inout [Member]) -> [Member] {
        switch pending.command {
        case .say:
            return members.values.filter { $0.name != nil && !$0.replaced && holdsBack($0, pending, tooSlow: &tooSlow) }
        case .message:
            return pending.recipient.flatMap { members[$0] }.flatMap { holdsBack($0, pending, tooSlow: &tooSlow) ? [$0] : nil } ?? []
        case .who, .send, .help, .quit:
            return []
        }
    }

    /// Whether `member`'s outbox is over the mark; once `pending` has waited
    /// `slowMemberTimeout`, such a member is added to `tooSlow` instead. The bound is the
    /// send's wait, not how long one member stays over the mark: members taking turns over it
    /// would otherwise hold the send for ever.
    private func holdsBack(_ member: Member, _ pending: PendingSend, tooSlow: inout [Member]) -> Bool {
        guard member.link.isOpen, member.link.connection.bufferedByteCount > Self.outboxMark else { return false }
        guard scheduler.now - pending.since < options.slowMemberTimeout else {
            if !tooSlow.contains(where: { $0 === member }) { tooSlow.append(member) }
            return false
        }
        return true
    }

    /// Drops the members a check found too slow, with `too-slow`; called once the check is
    /// over, as dropping one may end it and re-enter `admitSenders`.
    private func drop(_ tooSlow: [Member]) {
        for member in tooSlow {
            member.link.reject(ProtocolError(.tooSlow,
                "more than 1 MiB waited to be sent to you while a line waited \(options.slowMemberTimeout.secondsText) for it; read faster or rejoin"))
        }
    }

    /// Waits for the outboxes the oldest send needs to drain, and for it to have waited
    /// `slowMemberTimeout`.
    private func watchBlockers(tooSlow: inout [Member]) {
        guard let first = senders.first else { return }
        let blocking = blockers(of: first, tooSlow: &tooSlow)
        for member in blocking where !senderWatches.contains(member.id) {
            senderWatches.insert(member.id)
            member.link.whenDrained(.sender) { [weak self] in self?.admitSenders() }
        }
        guard slowMemberCheck == nil, !blocking.isEmpty else { return }
        slowMemberCheck = scheduler.schedule(at: first.since + options.slowMemberTimeout, leeway: .milliseconds(10)) { [weak self] in
            self?.slowMemberCheck = nil
            self?.admitSenders()
        }
    }

    /// Performs the waiting sends, in order, while their outboxes have room; then waits for
    /// what the next one needs.
    func admitSenders() {
        scheduler.assertOnExecutor()
        var tooSlow: [Member] = []
        senders.admit(while: { blockers(of: $0, tooSlow: &tooSlow).isEmpty }) { perform($0.command) }
        for id in senderWatches { members[id]?.link.whenDrained(.sender, nil) }
        senderWatches = []
        slowMemberCheck?.cancel()
        slowMemberCheck = nil
        if !senders.isEmpty { watchBlockers(tooSlow: &tooSlow) }
        drop(tooSlow)
    }

    /// `member` is leaving: the sends waiting to reach it fail, and those that waited for its
    /// outbox go on.
    func sendersLose(_ member: Member, _ reason: PeerLink.EndReason) {
        scheduler.assertOnExecutor()
        senderWatches.remove(member.id)
        let name = member.name ?? "the member"
        senders.fail(matching: { $0.recipient == member.id }) { pending in
            SendFailed("\(name) left the room (\(reason)) before \(Self.describe(pending.command)) could go to them; it was not sent")
        }
        admitSenders()
    }

    /// The room is closing: every waiting send fails.
    func failSenders() {
        scheduler.assertOnExecutor()
        senders.fail { pending in SendFailed.roomClosing(pending.command) }
        admitSenders()
    }

    fileprivate static func describe(_ command: RoomCommand) -> String {
        switch command {
        case .say(let text): "the line '\(text.prefix(40))'"
        case .message(let to, let text): "the line '\(text.prefix(40))' to \(to)"
        case .send(let to, let path): "the file \(path)" + (to.map { " to \($0)" } ?? "")
        case .who: "/who"
        case .help: "/help"
        case .quit: "/quit"
        }
    }
}
