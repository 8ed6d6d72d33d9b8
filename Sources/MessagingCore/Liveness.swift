/// When to ping a quiet peer, when to give up on it, and when a handshake is overdue.
///
/// Pure: the caller passes the time in and performs the actions that come out, so tests
/// advance time instead of sleeping.
public struct Liveness: Sendable {
    public enum Action: Sendable, Hashable {
        /// Send `PING` with this token.
        case ping(token: UInt64)
        /// Close: the handshake did not complete in time.
        case handshakeTimedOut
        /// Close: the peer stayed silent through every allowed ping.
        case peerSilent
    }

    public let heartbeatInterval: Duration
    public let allowedMisses: Int
    private var handshakeDeadline: ContinuousClock.Instant?
    private var lastHeard: ContinuousClock.Instant
    private var pingsUnanswered = 0
    private var lastPing: ContinuousClock.Instant?
    private var nextToken: UInt64 = 1

    /// - Parameters:
    ///   - now: when the connection opened.
    ///   - handshakeTimeout: how long `HELLO` may take, or nil not to require one in time.
    ///   - heartbeatInterval: silence after which to ping, and between pings.
    ///   - allowedMisses: pings that may go unanswered before the peer counts as gone.
    public init(now: ContinuousClock.Instant, handshakeTimeout: Duration?, heartbeatInterval: Duration, allowedMisses: Int = 3) {
        handshakeDeadline = handshakeTimeout.map { now + $0 }
        lastHeard = now
        self.heartbeatInterval = heartbeatInterval
        self.allowedMisses = allowedMisses
    }

    /// Any frame arrived.
    public mutating func heard(at now: ContinuousClock.Instant) {
        lastHeard = now
        pingsUnanswered = 0
        lastPing = nil
    }

    /// The handshake completed; only the heartbeat matters from now on.
    public mutating func handshakeCompleted() { handshakeDeadline = nil }

    /// What to do now, if anything.
    public mutating func tick(at now: ContinuousClock.Instant) -> Action? {
        if let handshakeDeadline, now >= handshakeDeadline { return .handshakeTimedOut }
        let due = (lastPing ?? lastHeard) + heartbeatInterval
        guard now >= due else { return nil }
        guard pingsUnanswered < allowedMisses else { return .peerSilent }
        pingsUnanswered += 1
        lastPing = now
        defer { nextToken += 1 }
        return .ping(token: nextToken)
    }

    /// When `tick` may next have something to do.
    public var nextDeadline: ContinuousClock.Instant {
        let heartbeat = (lastPing ?? lastHeard) + heartbeatInterval
        return handshakeDeadline.map { min($0, heartbeat) } ?? heartbeat
    }
}
