/// When a browser may read a zone's instances again: a token bucket over full reads. A zone
/// holds `burstReads` reads; each read (whatever set it off: a changed serial, a listing that
/// differs, or new names waiting to be resolved) takes one, and one comes back every
/// `refillInterval` once the bucket is not full.
///
/// A calm zone keeps a full bucket, so a change is read at the next poll (`interval`). A zone
/// that changes at every poll, or at some polls and not others, or that lists new names to
/// resolve at every read, gets `burstReads` reads and then one every `refillInterval`,
/// however its serial moves: it cannot make a browser read it again, and print up to 1,000
/// `added`/`removed` lines, every `interval`.
public struct ZonePollSchedule: Sendable, Equatable {
    /// The wait between polls of the serial while a read may follow.
    public static let interval: Duration = .seconds(2)
    /// How often a read comes back into a bucket that is not full.
    public static let refillInterval: Duration = .seconds(30)
    /// How many reads a calm zone may have in a row before `refillInterval` paces them.
    public static let burstReads = 3

    private var reads = burstReads
    /// When the bucket last got a read back (or began to lose them); nil while it was full.
    private var refilledAt: ContinuousClock.Instant?

    public init() {}

    /// Whether a read may happen at `now`.
    public mutating func mayRead(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        return reads > 0
    }

    /// Takes one read from the bucket (a read that happened although none was left takes nothing).
    public mutating func noteRead(at now: ContinuousClock.Instant) {
        refill(at: now)
        if reads == Self.burstReads { refilledAt = now }
        reads = max(reads - 1, 0)
    }

    /// Whether the bucket is empty: the next read waits for a refill.
    public var exhausted: Bool { reads == 0 }

    /// The wait before the next poll: `interval`, or until a read comes back when none is left.
    public func nextWait(at now: ContinuousClock.Instant) -> Duration {
        guard reads == 0, let refilledAt else { return Self.interval }
        return max(Self.interval, refilledAt + Self.refillInterval - now)
    }

    private mutating func refill(at now: ContinuousClock.Instant) {
        // At most `burstReads` rounds: each adds a read until the bucket is full.
        while reads < Self.burstReads, let last = refilledAt, now - last >= Self.refillInterval {
            reads += 1
            refilledAt = last + Self.refillInterval
        }
        if reads == Self.burstReads { refilledAt = nil }
    }
}
