import MessagingCore

extension RoomClient {
    /// The session ended before a line given to `send` was queued: nothing of it was sent.
    public struct SessionEnded: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String

        public init(_ message: String) { self.message = message }

        public var description: String { message }
    }

    /// Queues a line or a file for the room, suspending first while the text on its way
    /// (queued, or sent and not yet acknowledged by the server) leaves no room for it
    /// (`Options.maximumBytesInFlight`): a producer faster than the room's slowest part (the
    /// network, the server, its outbox) waits here instead of filling memory. Returns once the
    /// command is queued on the client's executor; what happens to it later comes as events
    /// (`notSent`, `fileSent`).
    /// - Throws: `CancellationError` when the task is cancelled while waiting for room (the
    ///   command was not queued, nothing of it is sent); `SessionEnded` when the session is
    ///   already over.
    public func send(_ command: RoomCommand) async throws {
        let holds = Self.holdsWindow(command)
        let weight = Self.weight(of: command)
        if holds { try await window.acquire(weight) }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            executor.execute { [self] in
                guard !isOver else {
                    if holds { window.release(weight) }
                    return continuation.resume(throwing: SessionEnded("the session with '\(options.instance.name)' already ended; nothing was sent"))
                }
                accept(command, reserved: true)
                continuation.resume()
            }
        }
    }
}
