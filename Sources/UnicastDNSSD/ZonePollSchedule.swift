/// How long a browser waits before it asks a zone's SOA serial again: `interval` while the
/// zone is calm, `churnInterval` once `churnReads` polls in a row found it changed (and so
/// read it again); the first poll that finds it unchanged goes back to `interval`.
///
/// A zone whose serial changes on every poll (a hostile or broken server, or one changed
/// by a script in a loop) would otherwise be read again, and up to 1,000 `added`/`removed`
/// lines printed, every `interval`; this way at most every `churnInterval`, while a zone
/// that changes now and then is still followed within `interval`.
public struct ZonePollSchedule: Sendable, Equatable {
    /// The wait between polls of a calm zone.
    public static let interval: Duration = .seconds(2)
    /// The wait between polls of a zone that keeps changing.
    public static let churnInterval: Duration = .seconds(30)
    /// How many polls in a row must find the zone changed before `churnInterval` applies.
    public static let churnReads = 3

    private var changedInARow = 0

    public init() {}

    /// Notes what a poll found: `changed` when the serial differed from the last read's
    /// (or the server gave none), so the zone's instances were read again.
    public mutating func note(changed: Bool) {
        changedInARow = changed ? min(changedInARow + 1, Self.churnReads) : 0
    }

    /// Whether the zone counts as churning: the next wait is `churnInterval`.
    public var churning: Bool { changedInARow >= Self.churnReads }

    /// The wait before the next poll.
    public var nextWait: Duration { churning ? Self.churnInterval : Self.interval }
}
