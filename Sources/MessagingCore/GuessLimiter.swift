/// Bounds online guessing of a room code: every room-code exchange a room starts is one guess
/// (CPace gives nothing to test offline), counted against the connection's host (an IPv4
/// address, an IPv6 /64: the caller passes `IPAddress.hostKey`), its key and the room as a
/// whole; a key the room already lists counts against its own key only (it needs no code to
/// join, so its reconnects never depend on what others did). A counter that reaches its limit within `window` refuses further
/// exchanges with `too-many-attempts` for `coolDown`, then starts again from zero. A guess
/// that proves the right code is given back. Pure: the caller passes the time (a manual
/// clock in tests).
///
/// Every table is bounded: at most `trackedAddresses` addresses and `trackedKeys` keys (more
/// new ones are refused as if the room's cap were reached, after entries that no longer
/// count are let go), and each counter keeps at most its limit of instants.
public struct GuessLimiter: Sendable {
    public struct Limits: Sendable, Hashable {
        /// Guesses from one host (an IPv4 address, an IPv6 /64) within `window`.
        public var perAddress = 5
        /// Guesses by one key within `window`.
        public var perKey = 5
        /// Guesses in the whole room within `window`.
        public var overall = 20
        /// Guesses within `window` kept for hosts and keys with no guess still counted against
        /// them, once `overall` is spent: one host that spends the room's guesses cannot keep a
        /// fresh member out (many clean hosts can; README, Limits).
        public var reservedForClean = 5
        public var window: Duration = .seconds(60)
        /// How long a counter that reached its limit refuses.
        public var coolDown: Duration = .seconds(60)
        /// Addresses and keys followed at most.
        public var trackedAddresses = 4096
        public var trackedKeys = 4096

        public init() {}
    }

    /// A guess under way, to give back with `succeeded(_:)` when it proved the code.
    public struct Attempt: Sendable, Hashable {
        let address: String
        let key: String
        let at: ContinuousClock.Instant
        /// Counted against the address and the room too (not a listed key's).
        let countsForRoom: Bool
        /// Counted against the reserve for clean hosts (the room's guesses were spent).
        var fromReserve = false
    }

    public enum Decision: Sendable, Hashable {
        case allowed(Attempt)
        /// `too-many-attempts`, saying for how long.
        case refused(ProtocolError)
    }

    /// Recent guesses of one address, one key or the room, and its cool-down.
    struct Counter: Sendable, Hashable {
        var times: [ContinuousClock.Instant] = []
        var blockedUntil: ContinuousClock.Instant?
        /// The guess that reached the limit (a success gives its block back too).
        var blockedBy: ContinuousClock.Instant?

        /// Lets go of what no longer counts at `now`: an expired cool-down (and the guesses it
        /// paid for), guesses older than `window`.
        mutating func forget(before now: ContinuousClock.Instant, window: Duration) {
            if let until = blockedUntil, until <= now {
                self = Counter()
            }
            if blockedUntil == nil { times.removeAll { now - $0 >= window } }
        }

        var isIdle: Bool { times.isEmpty && blockedUntil == nil }

        func refusal(at now: ContinuousClock.Instant) -> Duration? {
            blockedUntil.map { $0 - now }.flatMap { $0 > .zero ? $0 : nil }
        }

        /// Counts a guess; reaching `limit` starts the cool-down.
        mutating func count(_ now: ContinuousClock.Instant, limit: Int, coolDown: Duration) {
            times.append(now)
            if times.count >= limit {
                blockedUntil = now + coolDown
                blockedBy = now
            }
        }

        /// Gives back the guess made at `instant`.
        mutating func giveBack(_ instant: ContinuousClock.Instant) {
            if let index = times.firstIndex(of: instant) { times.remove(at: index) }
            if blockedBy == instant {
                blockedUntil = nil
                blockedBy = nil
            }
        }
    }

    public let limits: Limits
    private var addresses: [String: Counter] = [:]
    private var keys: [String: Counter] = [:]
    private var room = Counter()
    /// Guesses taken from `reservedForClean` while the room's are spent.
    private var reserve = Counter()

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Addresses and keys followed now (for tests: the tables stay bounded).
    public var trackedCount: (addresses: Int, keys: Int) { (addresses.count, keys.count) }

    /// Whether a guess from `address` by `key` may start at `now`; when allowed, it is counted.
    /// - Parameter listed: the room lists `key` already: only its own key's counter applies.
    public mutating func begin(address: String, key: String, listed: Bool = false, at now: ContinuousClock.Instant) -> Decision {
        let limits = limits
        room.forget(before: now, window: limits.window)
        addresses[address]?.forget(before: now, window: limits.window)
        keys[key]?.forget(before: now, window: limits.window)
        if listed {
            if let wait = keys[key]?.refusal(at: now) {
                return .refused(refusal("too many wrong room codes came from this key", wait))
            }
            guard Self.makeRoom(for: key, in: &keys, capacity: limits.trackedKeys, now: now, window: limits.window) else {
                return .refused(refusal("too many addresses and keys are trying room codes at once", limits.coolDown))
            }
            keys[key, default: Counter()].count(now, limit: limits.perKey, coolDown: limits.coolDown)
            return .allowed(Attempt(address: address, key: key, at: now, countsForRoom: false))
        }
        reserve.forget(before: now, window: limits.window)
        // A host and key with nothing counted against them may use the reserve while the room's guesses are spent.
        let isClean = addresses[address]?.isIdle ?? true && keys[key]?.isIdle ?? true
        let fromReserve = room.refusal(at: now) != nil
        if let wait = room.refusal(at: now), !isClean || reserve.refusal(at: now) != nil {
            return .refused(refusal("too many wrong room codes were tried in this room in the last minute", max(wait, reserve.refusal(at: now) ?? .zero)))
        }
        if let wait = addresses[address]?.refusal(at: now) {
            return .refused(refusal("too many wrong room codes came from \(address)", wait))
        }
        if let wait = keys[key]?.refusal(at: now) {
            return .refused(refusal("too many wrong room codes came from this key", wait))
        }
        guard Self.makeRoom(for: address, in: &addresses, capacity: limits.trackedAddresses, now: now, window: limits.window),
              Self.makeRoom(for: key, in: &keys, capacity: limits.trackedKeys, now: now, window: limits.window) else {
            return .refused(refusal("too many addresses and keys are trying room codes at once", limits.coolDown))
        }
        if fromReserve {
            reserve.count(now, limit: limits.reservedForClean, coolDown: limits.coolDown)
        } else {
            room.count(now, limit: limits.overall, coolDown: limits.coolDown)
        }
        addresses[address, default: Counter()].count(now, limit: limits.perAddress, coolDown: limits.coolDown)
        keys[key, default: Counter()].count(now, limit: limits.perKey, coolDown: limits.coolDown)
        return .allowed(Attempt(address: address, key: key, at: now, countsForRoom: true, fromReserve: fromReserve))
    }

    /// The guess proved the code: it is given back (and a cool-down it started is lifted).
    public mutating func succeeded(_ attempt: Attempt) {
        if attempt.fromReserve {
            reserve.giveBack(attempt.at)
            addresses[attempt.address]?.giveBack(attempt.at)
        } else if attempt.countsForRoom {
            room.giveBack(attempt.at)
            addresses[attempt.address]?.giveBack(attempt.at)
        }
        keys[attempt.key]?.giveBack(attempt.at)
        if addresses[attempt.address]?.isIdle == true { addresses[attempt.address] = nil }
        if keys[attempt.key]?.isIdle == true { keys[attempt.key] = nil }
    }

    /// Whether `name` has or can get an entry: when the table is full, entries that no longer
    /// count are let go first.
    private static func makeRoom(for name: String, in table: inout [String: Counter], capacity: Int,
                                 now: ContinuousClock.Instant, window: Duration) -> Bool {
        guard table[name] == nil, table.count >= capacity else { return true }
        for (entry, var counter) in table {
            counter.forget(before: now, window: window)
            table[entry] = counter.isIdle ? nil : counter
        }
        return table.count < capacity
    }

    private func refusal(_ what: String, _ wait: Duration) -> ProtocolError {
        let seconds = max(1, Int((wait / .seconds(1)).rounded(.up)))
        return ProtocolError(.tooManyAttempts, "\(what); try again in \(seconds) s")
    }
}
