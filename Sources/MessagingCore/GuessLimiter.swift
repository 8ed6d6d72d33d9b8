/// Bounds online guessing of a room code: every room-code exchange a room starts is one guess
/// (CPace gives nothing to test offline), counted against the connection's host (an IPv4
/// address, an IPv6 /64, a link-local peer by its hardware address: the caller passes
/// `SocketEndpoint.hostKey`), its key and the room as a whole; a key the room already lists
/// counts against its own key only (it needs no code to join, so its reconnects never depend
/// on what others did). A try that is refused still counts against its host, so a host gets at
/// most `perAddress` tries a window, refused or not. A counter that reaches its limit within
/// `window` refuses with `too-many-attempts` for `coolDown` (the room's for up to
/// `coolDownJitter` longer than its refusal says), then starts again from zero. Once the room's
/// guesses are spent, hosts and keys that have not guessed within the window get the reserve,
/// one guess at a time at a steady rate (each next one up to half an interval later, at random). A guess that proves the right code is given back.
/// Pure: the caller passes the time (a manual clock in tests) and the randomness.
///
/// Every table is bounded: at most `trackedAddresses` addresses and `trackedKeys` keys (more
/// new ones are refused as if the room's cap were reached, after entries that no longer
/// count are let go), and each counter keeps at most its limit of instants.
public struct GuessLimiter: Sendable {
    public struct Limits: Sendable, Hashable {
        /// Tries (guesses and refused tries) from one host within `window`.
        public var perAddress = 5
        /// Guesses by one key within `window`.
        public var perKey = 5
        /// Guesses in the whole room within `window`.
        public var overall = 20
        /// Guesses within `window` kept for hosts and keys that have not guessed within it, once
        /// `overall` is spent, handed out one at a time, the next one `window / reservedForClean`
        /// to half as much again later (at random) after the last was taken: one
        /// host that spends the room's guesses cannot keep a fresh member out (many hosts can
        /// make it wait; README, Limits).
        public var reservedForClean = 5
        public var window: Duration = .seconds(60)
        /// How long a counter that reached its limit refuses (what the refusal says).
        public var coolDown: Duration = .seconds(60)
        /// The room's cool-down ends at a random instant up to this much after `coolDown`, so
        /// that nobody can be first in line by timing the refusal.
        public var coolDownJitter: Duration = .seconds(20)
        /// Addresses and keys followed at most.
        public var trackedAddresses = 4096
        public var trackedKeys = 4096

        public init() {}

        /// Time between two guesses of the reserve.
        var reserveInterval: Duration? {
            reservedForClean > 0 ? window / reservedForClean : nil
        }
    }

    /// A guess under way, to give back with `succeeded(_:)` when it proved the code.
    public struct Attempt: Sendable, Hashable {
        let address: String
        let key: String
        let at: ContinuousClock.Instant
        /// Counted against the address and the room too (not a listed key's).
        let countsForRoom: Bool
        /// Taken from the reserve (the room's guesses were spent).
        var fromReserve = false
    }

    public enum Decision: Sendable, Hashable {
        case allowed(Attempt)
        /// `too-many-attempts`, saying for how long.
        case refused(ProtocolError)
    }

    public let limits: Limits
    private var addresses: [String: Counter] = [:]
    private var keys: [String: Counter] = [:]
    private var room = Counter()
    /// When the reserve has its next guess to give (a token bucket holding one); nil: now.
    private var reserveNextAt: ContinuousClock.Instant?

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Addresses and keys followed now (for tests: the tables stay bounded).
    public var trackedCount: (addresses: Int, keys: Int) { (addresses.count, keys.count) }

    /// Whether a guess from `address` by `key` may start at `now`; when allowed, it is counted,
    /// and when refused, it is counted against `address` all the same.
    /// - Parameters:
    ///   - listed: the room lists `key` already: only its own key's counter applies.
    ///   - random: a value in 0...1, drawn for each guess let through: when it starts the room's
    ///     cool-down, how much of `coolDownJitter` is added; when it takes the reserve's, how
    ///     much later (up to half an interval) the next one comes.
    public mutating func begin(address: String, key: String, listed: Bool = false, at now: ContinuousClock.Instant,
                               random: () -> Double = { Double.random(in: 0..<1) }) -> Decision {
        let limits = limits
        room.forget(before: now, window: limits.window)
        addresses[address]?.forget(before: now, window: limits.window)
        keys[key]?.forget(before: now, window: limits.window)
        if listed { return beginListed(address: address, key: key, at: now) }
        if let wait = addresses[address]?.refusal(at: now) {
            return .refused(refusal("too many room codes were tried from \(address)", wait))
        }
        if let wait = keys[key]?.refusal(at: now) {
            return refuse(address, at: now, refusal("too many wrong room codes came from this key", wait))
        }
        var fromReserve = false
        if let wait = room.refusal(at: now) {
            let hasNotGuessed = addresses[address]?.hasNotGuessed ?? true && keys[key]?.hasNotGuessed ?? true
            guard hasNotGuessed, limits.reserveInterval != nil, reserveNextAt.map({ $0 <= now }) ?? true else {
                return refuse(address, at: now, refusal("too many wrong room codes were tried in this room in the last minute", wait))
            }
            fromReserve = true
        }
        guard Self.makeRoom(for: address, in: &addresses, capacity: limits.trackedAddresses, now: now, window: limits.window),
              Self.makeRoom(for: key, in: &keys, capacity: limits.trackedKeys, now: now, window: limits.window) else {
            return .refused(refusal("too many addresses and keys are trying room codes at once", limits.coolDown))
        }
        let draw = min(max(random(), 0), 1)
        if fromReserve, let interval = limits.reserveInterval {
            // Up to half an interval later, at random: the next one cannot be timed either.
            reserveNextAt = now + interval + interval * (draw / 2)
        } else {
            room.count(now, guess: true, limit: limits.overall, coolDown: limits.coolDown, window: limits.window, extra: limits.coolDownJitter * draw)
        }
        addresses[address, default: Counter()].count(now, guess: true, limit: limits.perAddress, coolDown: limits.coolDown, window: limits.window)
        keys[key, default: Counter()].count(now, guess: true, limit: limits.perKey, coolDown: limits.coolDown, window: limits.window)
        return .allowed(Attempt(address: address, key: key, at: now, countsForRoom: true, fromReserve: fromReserve))
    }

    /// The guess proved the code: it is given back (and a cool-down it started is lifted).
    public mutating func succeeded(_ attempt: Attempt) {
        if attempt.fromReserve {
            if let next = reserveNextAt, let interval = limits.reserveInterval, next - attempt.at <= interval * 1.5 { reserveNextAt = nil }
            addresses[attempt.address]?.giveBack(attempt.at)
        } else if attempt.countsForRoom {
            room.giveBack(attempt.at)
            addresses[attempt.address]?.giveBack(attempt.at)
        }
        keys[attempt.key]?.giveBack(attempt.at)
        if addresses[attempt.address]?.isIdle == true { addresses[attempt.address] = nil }
        if keys[attempt.key]?.isIdle == true { keys[attempt.key] = nil }
    }

    /// A key the room lists: its own counter only.
    private mutating func beginListed(address: String, key: String, at now: ContinuousClock.Instant) -> Decision {
        if let wait = keys[key]?.refusal(at: now) {
            return .refused(refusal("too many wrong room codes came from this key", wait))
        }
        guard Self.makeRoom(for: key, in: &keys, capacity: limits.trackedKeys, now: now, window: limits.window) else {
            return .refused(refusal("too many addresses and keys are trying room codes at once", limits.coolDown))
        }
        keys[key, default: Counter()].count(now, guess: true, limit: limits.perKey, coolDown: limits.coolDown, window: limits.window)
        return .allowed(Attempt(address: address, key: key, at: now, countsForRoom: false))
    }

    /// Refuses with `error`, counting the try against `address` (when its table has room).
    private mutating func refuse(_ address: String, at now: ContinuousClock.Instant, _ error: ProtocolError) -> Decision {
        if Self.makeRoom(for: address, in: &addresses, capacity: limits.trackedAddresses, now: now, window: limits.window) {
            addresses[address, default: Counter()].count(now, guess: false, limit: limits.perAddress, coolDown: limits.coolDown, window: limits.window)
        }
        return .refused(error)
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
