import MessagingCore
import TransportCore

/// An outgoing file waits for this side's own outbox: `pump` reads no more of it while
/// `outboxTarget` bytes wait, and its `FILE_END` waits behind its data. A peer that accepted
/// the file, keeps answering pings (so the heartbeat is content) and never reads would hold
/// the file, and everything queued after it, for ever. So the outbox must move: while a file
/// waits for it, `answerTimeout` (60 s) in which it takes nothing (no byte taken by the kernel,
/// `ByteStream.sentByteCount`) ends the link (`ERROR too-slow`), and the file with it, as not
/// delivered; the owner learns it first (`onOutboxStall`) and treats it as a lost connection.
/// A slow peer that reads is never cut off: every drain to the mark, and every check that
/// finds any byte taken, starts the time again.
///
/// `answerTimeout` because it is what the receiver already gets for each answer, and what a
/// room allows a relayed transfer between checks (`transferIdleTimeout`); the client's bound
/// for text waiting on the room (4 heartbeat intervals, 60 s) is the same, and the room's for
/// a member that holds back text (`slowMemberTimeout`, 30 s) of the same order.
///
/// The wait for `FILE_RESULT` after `FILE_END` starts once `FILE_END` has left the outbox (the
/// stream's `sentByteCount` reached what it was plus what waited when `FILE_END` was queued),
/// so that a slow link on which 2 MiB still waited does not use it up. That is seen at the
/// next drain, or at the latest at the outbox check (`answerTimeout`) after it left.
///
/// - Important: every method runs on the link's executor (its event loop in the tools).
extension FileTransfers {
    /// The outbox drained to `PeerLink.outboxMark` or emptied: it moved, so its time starts
    /// again; the current file sends more, or (ended) starts its wait for the result once its
    /// end has left.
    func outboxDrained() {
        outboxWatch?.cancel()
        outboxWatch = nil
        guard let transfer = outgoing.first else { return }
        switch transfer.state {
        case .accepted: pump()
        case .ended: awaitResultOnceSent(transfer)
        case .hashing, .offered, .confirming: break
        }
    }

    /// Starts the outbox's time while `transfer` waits for it, unless it runs already. When it
    /// runs out and the stream took any byte meanwhile, the peer reads (slowly): it starts
    /// again; when it took none, the link is given up on (`outboxStalled`).
    func watchOutbox(_ transfer: Outgoing) {
        guard outboxWatch == nil else { return }
        // Offered first, as at the check: room the kernel had already is not the peer reading.
        link.connection.offerQueuedBytes()
        guard link.isOpen else { return }
        let sentBefore = link.connection.sentByteCount
        let timeout = answerTimeout
        outboxWatch = link.scheduler.schedule(after: timeout) { [weak self, weak transfer] in
            guard let self, let transfer, outgoing.first === transfer else { return }
            outboxWatch = nil
            guard link.isOpen else { return } // ending anyway
            // A peer that reads slowly frees less than the loop waits for before it writes.
            link.connection.offerQueuedBytes()
            guard link.isOpen else { return }
            guard link.connection.sentByteCount <= sentBefore, link.connection.bufferedByteCount > 0 else {
                if transfer.state == .ended { return awaitResultOnceSent(transfer) }
                return watchOutbox(transfer)
            }
            outboxStalled(transfer, for: timeout)
        }
    }

    /// `FILE_END` of `transfer` was queued: the wait for its result starts once it has left
    /// the outbox; the outbox is watched until then.
    func endQueued(_ transfer: Outgoing) {
        transfer.endLeavesAt = link.connection.sentByteCount + link.connection.bufferedByteCount
        awaitResultOnceSent(transfer)
    }

    /// Starts the wait for the result if `FILE_END` has left, or watches the outbox meanwhile.
    private func awaitResultOnceSent(_ transfer: Outgoing) {
        guard let leavesAt = transfer.endLeavesAt else { return } // the wait runs already
        guard link.connection.sentByteCount >= leavesAt else { return watchOutbox(transfer) }
        transfer.endLeavesAt = nil
        outboxWatch?.cancel()
        outboxWatch = nil
        awaitAnswer(transfer, in: .ended, within: answerTimeout,
                    "the receiver did not confirm \(transfer.path) within \(answerTimeout.secondsText) of its end; it may not have been stored: send it again")
    }

    /// The outbox took nothing for `timeout` while `transfer` waited for it: the peer is told
    /// (`ERROR too-slow`) and the link closes within 1 s; the files end as not delivered then
    /// (`linkEnded`), with this reason.
    private func outboxStalled(_ transfer: Outgoing, for timeout: Duration) {
        let name = String(transfer.path.split(separator: "/").last ?? "file")
        let queued = transfer.state == .ended
            ? "all \(transfer.size) bytes and its end queued"
            : "\(transfer.offset) of its \(transfer.size) bytes queued"
        outboxStall = "the other end read nothing of the data waiting to be sent for \(timeout.secondsText) (\(name): \(queued)), "
            + "though it kept the connection up; the connection was closed"
        onOutboxStall?(timeout)
        link.reject(ProtocolError(.tooSlow,
            "you read nothing of the file data sent to you for \(timeout.secondsText) (\(name): \(queued)); the connection is closed: read faster, or rejoin"),
            closing: true)
    }
}
