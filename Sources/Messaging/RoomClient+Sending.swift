import MessagingCore
import SafeText

extension RoomClient {
    /// The session ended before a line given to `send` was queued: nothing of it was sent.
    public struct SessionEnded: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String

        public init(_ message: String) { self.message = message }

        public var description: String { message }
    }

    /// Bytes waiting in the connection's outbox above which `send` waits for it to drain (a
    /// quarter of a TCP connection's 4 MiB limit, past which the link would be closed).
    public static let outboxMark = PeerLink.outboxMark

    /// Queues a line or a file for the room, suspending first while the room is slow:
    /// - while the text on its way (queued, or sent and not yet acknowledged by the server)
    ///   leaves no room for it (`Options.maximumBytesInFlight`);
    /// - then while more than `outboxMark` bytes wait in the connection's outbox (a slow TCP
    ///   peer, or a server too old to acknowledge text), until the outbox drains. Sends wait
    ///   in order: a later one never passes an earlier one.
    ///
    /// A producer faster than the room's slowest part (the network, the server, its outbox)
    /// waits here instead of filling memory or having the link closed. Returns once the
    /// command is queued on the client's executor; what happens to it later comes as events
    /// (`notSent`, `fileSent`). While disconnected, lines are queued for the next connection
    /// (bounded by the window).
    ///
    /// A room that stays connected (it answers pings) but acknowledges none of the text on its
    /// way for the confirmation timeout while sends wait here is treated as a lost connection:
    /// the client reconnects and sends the unacknowledged lines again, and gives up after the
    /// reconnect limit, as after any lost connection (`watchAcknowledgements`).
    /// - Throws: `CancellationError` when the task is cancelled while waiting (the command was
    ///   not queued, nothing of it is sent, and its room in the window is given back);
    ///   `SessionEnded` when the session is over, or ends while the send waits.
    public func send(_ command: RoomCommand) async throws {
        let holds = Self.holdsWindow(command)
        let weight = Self.weight(of: command)
        if holds { try await window.acquire(weight, whenWaiting: { executor.execute { [self] in watchAcknowledgements() } }) }
        let waiter = SendWaiter()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                executor.execute { [self] in
                    guard !isOver else {
                        giveBack(command)
                        return continuation.resume(throwing: sessionEnded)
                    }
                    if senders.isEmpty, !outboxIsFull {
                        accept(command, reserved: true)
                        return continuation.resume()
                    }
                    guard senders.append(waiter, command, continuation) else { return giveBack(command) }
                    link?.whenDrained(.sender) { [weak self] in self?.admitSenders() }
                    watchAcknowledgements()
                }
            }
        } onCancel: {
            waiter.cancelled.store(true, ordering: .sequentiallyConsistent)
            executor.execute { [self] in
                if let command = senders.cancel(waiter) { giveBack(command) }
            }
        }
    }

    /// Whether the room (the last one that said HELLO) acknowledges text: only then does
    /// "delivered" mean confirmed; lines to an older room count as delivered once written.
    public var roomConfirmsText: Bool {
        get async { await executor.submit { [self] in serverAcknowledges } }
    }

    /// Whether a `send` waits, for the window or for the outbox.
    var sendsWait: Bool { !senders.isEmpty || window.hasWaiters }

    /// Whether the connection's outbox is over its mark. On the executor.
    var outboxIsFull: Bool {
        guard let link else { return false } // disconnected: lines queue for the next connection
        return link.connection.bufferedByteCount > Self.outboxMark
    }

    /// Lets the waiting sends through, in order, while the outbox has room; stops watching the
    /// outbox once none waits. On the executor.
    func admitSenders() {
        executor.assertOnExecutor()
        senders.admit(while: { _ in !isOver && !outboxIsFull }) { accept($0, reserved: true) }
        if senders.isEmpty { link?.whenDrained(.sender, nil) }
    }

    /// The session is over: every waiting send fails, and gives back its room. On the executor.
    func failSenders() {
        executor.assertOnExecutor()
        for command in senders.fail({ [sessionEnded] _ in sessionEnded }) { giveBack(command) }
    }

    private var sessionEnded: SessionEnded {
        SessionEnded("the session with \(TerminalSafe.quoted(options.instance.name)) already ended; nothing was sent")
    }

    /// Gives back the room in the window a command took and never used.
    private func giveBack(_ command: RoomCommand) {
        if Self.holdsWindow(command) { window.release(Self.weight(of: command)) }
    }
}
