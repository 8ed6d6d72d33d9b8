import MessagingCore

extension RoomServer {
    /// A member holding at most this much in its outbox is never dropped for the room's total
    /// (`Options.roomOutboxLimit`): 1,000 members under it hold less than the default limit.
    public static let outboxFloor = 256 << 10

    /// A member whose outbox has not moved for this long is dropped for the room's total
    /// before any whose outbox moves, however much each holds.
    public static let outboxStall: Duration = .seconds(1)

    /// Bytes were queued for `member` (every send of its link calls this: `PeerLink.onQueued`;
    /// a broadcast written to the connection directly calls it itself). In constant time, so
    /// that what a peer makes the room send costs no more with a thousand members than with
    /// one: the member's outbox is read again into the room's running count
    /// (`countedOutboxBytes`), its progress noted while it holds more than `outboxFloor`, and
    /// all outboxes are added up at the end of this turn (`boundOutboxes`) only once the
    /// running count passes `Options.roomOutboxLimit`. (Adding them all up after every turn
    /// while one member held more than the floor let a member kept over it make each ping a
    /// pass over the room: a review's 1,000 members, 5.1x the CPU per ping.)
    ///
    /// The running count never counts less than the outboxes hold but for what a turn adds
    /// after its sends (a TLS link encrypts what it gathered at the end of the turn): outboxes
    /// only grow by sends, and what they send is taken off only when the member is sent to
    /// again or at the next check. So once the loop is idle, either all outboxes together hold
    /// at most the limit (plus that), or none holds more than `outboxFloor`.
    func queued(for member: Member) {
        let held = member.link.connection.heldByteCount
        countedOutboxBytes += held - member.countedOutbox
        member.countedOutbox = held
        noteProgress(of: member, holding: held, at: scheduler.now)
        guard !outboxCheckScheduled, countedOutboxBytes > options.roomOutboxLimit else { return }
        outboxCheckScheduled = true
        scheduler.execute { [weak self] in self?.boundOutboxes() }
    }

    /// While `member`'s outbox holds more than `outboxFloor`, when it was last seen to move
    /// (`outboxProgress`: a send since the last look); forgotten once it holds less.
    private func noteProgress(of member: Member, holding held: Int, at now: ContinuousClock.Instant) {
        guard held > Self.outboxFloor else {
            member.outboxProgress = nil
            return
        }
        let sent = member.link.connection.sentByteCount
        if member.outboxProgress?.sent != sent { member.outboxProgress = (sent, now) }
    }

    /// `member` is gone: what it was counted as holding is taken off the running count.
    func forgetOutbox(of member: Member) {
        countedOutboxBytes -= member.countedOutbox
        member.countedOutbox = 0
    }

    /// Keeps the memory of all outboxes together under `Options.roomOutboxLimit`: members
    /// that read nothing could otherwise each pin up to their connection's 4 MiB (a review's 640
    /// silent members from one machine held 2.4 GB). What an outbox holds counts
    /// (`heldByteCount`), not only what waits in it. Members holding more than `outboxFloor`
    /// are dropped with `too-slow` (their connections closed at once) until the rest is under
    /// the limit: first those whose outbox has not moved for `outboxStall`, then the others,
    /// each group holding the most first. So a member that just joined, or reads, is not the
    /// one dropped for the history or lines it is being sent while others read nothing (a
    /// review's honest joiner on a 20 ms link was, every time, as the one holding the most).
    /// Runs as a turn of its own: dropping closes links, which must not happen inside a relay.
    func boundOutboxes() {
        scheduler.assertOnExecutor()
        outboxCheckScheduled = false
        outboxChecks += 1
        let now = scheduler.now
        var total = 0
        var holding: [(member: Member, bytes: Int, stalled: Bool)] = []
        for member in members.values {
            guard member.link.isOpen else {
                // Closing: its outbox is let go of within its grace; not counted (the running
                // count is set from `total` below).
                member.countedOutbox = 0
                continue
            }
            let bytes = member.link.connection.heldByteCount
            member.countedOutbox = bytes
            total += bytes
            noteProgress(of: member, holding: bytes, at: now)
            guard bytes > Self.outboxFloor else { continue }
            let stalled = member.outboxProgress.map { now - $0.at >= Self.outboxStall } ?? false
            holding.append((member, bytes, stalled))
        }
        // Exact again: each member's count is what it holds now (the dropped ones' come off as
        // they end).
        countedOutboxBytes = total
        guard total > options.roomOutboxLimit else { return }
        holding.sort { $0.stalled != $1.stalled ? $0.stalled : $0.bytes > $1.bytes }
        var dropped: [Member] = []
        for (member, bytes, _) in holding where total > options.roomOutboxLimit {
            total -= bytes
            dropped.append(member)
        }
        let limit = options.roomOutboxLimit >> 20
        for member in dropped {
            member.link.reject(ProtocolError(.tooSlow,
                "the room's members together had more than \(limit) MiB waiting to be sent, and you were among those holding the most; read faster or rejoin"))
            // Closed at once, not after the usual second for the ERROR to leave: it waits behind
            // what the member does not read, and that second is what the limit is for (a
            // recheck: 114 members dropped so held 340 MB for it).
            member.link.connection.close()
        }
    }
}
