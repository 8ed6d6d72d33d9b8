/// What a server remembers of its clients' numbered text (`SESSION` and `ACK`, see
/// docs/PROTOCOL.md), so that text a client sends again after a broken connection is relayed
/// once: a TEXT numbered below what the session already had is a repeat.
///
/// Every value comes from a peer, so the table defends itself: a session is held by at most one
/// connection at a time (nobody can take over a session that is in use), a session belongs to
/// the key of the member that opened it (`owner`: another key's SESSION with the same id is a
/// session of its own, so it can neither replay nor take over nor cut short the owner's; members
/// without a key share one space of ids, as before keys), the sessions of
/// connected members are never forgotten, and when the table is full the oldest session that
/// no connection holds is forgotten, first among those of the address that has the most, so
/// one host that opens sessions by the thousand pushes out its own before anyone else's.
public struct TextSessions: Sendable {
    /// Numbers stay below this: a SESSION at or past it is refused, so `next + 1` never
    /// overflows (a client would need 2^63 lines to get there).
    public static let sequenceLimit: UInt64 = 1 << 63

    /// Why `attach` refused.
    public enum Refusal: Error, Sendable, Hashable {
        /// Another connection holds this session now.
        case inUse
        /// `next` is at or past `sequenceLimit`.
        case outOfRange
    }

    /// Sessions remembered at most while nobody holds them (held ones are bounded by the
    /// number of connections).
    public let capacity: Int
    private var entries: [Key: Entry] = [:]
    /// Sessions that no connection holds, oldest first (lazily pruned: see `forgetOldest`).
    private var idle: [(session: Key, stamp: UInt64)] = []
    private var idleStart = 0
    private var idleCountByAddress: [String: Int] = [:]
    private var idleCount = 0
    private var clock: UInt64 = 0

    /// A session id in the space of its owner's key (nil: members without a key).
    private struct Key: Hashable, Sendable {
        var owner: String?
        var id: UInt64
    }

    private struct Entry: Sendable {
        var next: UInt64
        var holder: Int?
        var address: String
        /// When it last became idle; matches its place in `idle`.
        var stamp: UInt64
    }

    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// Sessions remembered, held or not.
    public var count: Int { entries.count }

    /// Connection `holder` (from `address`) opened `session`, saying its next TEXT is numbered
    /// `next`. A session seen before keeps what it had; a new one (or one this server forgot)
    /// starts at `next`.
    /// - Parameter owner: the member's key (e.g. its fingerprint's full form); nil for a member
    ///   without one. Sessions of different owners never meet, whatever their ids.
    /// - Throws: `.inUse` when another connection holds it, `.outOfRange` for a `next` at or
    ///   past `sequenceLimit`.
    public mutating func attach(_ id: UInt64, owner: String? = nil, next: UInt64, holder: Int, address: String) throws(Refusal) {
        guard next < TextSessions.sequenceLimit else { throw .outOfRange }
        let session = Key(owner: owner, id: id)
        if var entry = entries[session] {
            guard entry.holder == nil || entry.holder == holder else { throw .inUse }
            if entry.holder == nil { countIdle(entry.address, -1) }
            entry.holder = holder
            entry.address = address
            entries[session] = entry
            return
        }
        entries[session] = Entry(next: next, holder: holder, address: address, stamp: 0)
    }

    /// Connection `holder` ended: its session stays remembered (for its reconnect) until the
    /// table needs the room.
    public mutating func detach(_ id: UInt64, owner: String? = nil, holder: Int) {
        let session = Key(owner: owner, id: id)
        guard var entry = entries[session], entry.holder == holder else { return }
        clock += 1
        entry.holder = nil
        entry.stamp = clock
        entries[session] = entry
        idle.append((session, clock))
        countIdle(entry.address, 1)
        while idleCount > capacity, forgetOldest() {}
        // Places go stale when an idle session is taken up again: keep the list in proportion.
        if idle.count - idleStart > 2 * idleCount + 1024 {
            idle = idle[idleStart...].filter(isLive)
            idleStart = 0
        }
    }

    /// Whether TEXT number `sequence` of `session` is new; records it if so. Only the
    /// session's holder may call this (the server checks that the sender attached it).
    public mutating func accept(_ sequence: UInt64, in id: UInt64, owner: String? = nil) -> Bool {
        let session = Key(owner: owner, id: id)
        guard var entry = entries[session], sequence >= entry.next, sequence < TextSessions.sequenceLimit else { return false }
        entry.next = sequence + 1
        entries[session] = entry
        return true
    }

    private mutating func countIdle(_ address: String, _ change: Int) {
        let count = (idleCountByAddress[address] ?? 0) + change
        idleCountByAddress[address] = count > 0 ? count : nil
        idleCount += change
    }

    /// Forgets one idle session: the oldest of the address with the most idle sessions.
    /// Returns false when there was none to forget.
    private mutating func forgetOldest() -> Bool {
        guard let address = idleCountByAddress.max(by: { $0.value < $1.value })?.key else { return false }
        var forgot = false
        var index = idleStart
        while index < idle.count {
            let (session, stamp) = idle[index]
            if let entry = entries[session], entry.holder == nil, entry.stamp == stamp, entry.address == address {
                entries[session] = nil
                countIdle(address, -1)
                idle[index].stamp = 0 // spent
                forgot = true
                break
            }
            index += 1
        }
        // Drop spent and stale places from the front so `idle` stays as long as what it holds.
        while idleStart < idle.count, !isLive(idle[idleStart]) { idleStart += 1 }
        if idleStart > 1024 && idleStart * 2 > idle.count {
            idle.removeFirst(idleStart)
            idleStart = 0
        }
        return forgot
    }

    private func isLive(_ place: (session: Key, stamp: UInt64)) -> Bool {
        guard place.stamp != 0, let entry = entries[place.session] else { return false }
        return entry.holder == nil && entry.stamp == place.stamp
    }
}
