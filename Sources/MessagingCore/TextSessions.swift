/// What a server remembers of its clients' numbered text (`SESSION` and `ACK`, see
/// docs/PROTOCOL.md), so that text a client sends again after a broken connection is relayed
/// once: a TEXT numbered below what the session already had is a repeat.
public struct TextSessions: Sendable {
    /// Sessions remembered at most; the oldest is forgotten first.
    public let capacity: Int
    private var nextExpected: [UInt64: UInt64] = [:]
    private var order: [UInt64] = []

    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// A client opened `session`, saying its next TEXT is numbered `next`. A session seen
    /// before keeps what it had; a new one (or one this server forgot) starts at `next`.
    public mutating func open(_ session: UInt64, next: UInt64) {
        if nextExpected[session] == nil { remember(session, next) }
    }

    /// Whether TEXT number `sequence` of `session` is new; records it if so.
    public mutating func accept(_ sequence: UInt64, in session: UInt64) -> Bool {
        guard let expected = nextExpected[session] else {
            remember(session, sequence + 1)
            return true
        }
        guard sequence >= expected else { return false }
        nextExpected[session] = sequence + 1
        return true
    }

    private mutating func remember(_ session: UInt64, _ next: UInt64) {
        if nextExpected.count >= capacity, !order.isEmpty {
            nextExpected[order.removeFirst()] = nil
        }
        nextExpected[session] = next
        order.append(session)
    }
}
