/// Decides when a browse's first batch is complete by the daemon's own "all for now" signal,
/// without losing an instance on the way.
///
/// The signal comes from a second browser on avahi-daemon (its client library), while the
/// events come from the dns_sd browse: two browsers, two D-Bus connections, whose reports may
/// arrive in any order. So the daemon's browser also says what it found (`daemonFound`), and
/// the batch is complete only once the signal has come *and* every instance it found on an
/// interface has been reported by the dns_sd browse on that interface (`listed`). Avahi sends
/// the signal one second after it first queried for the type, so hosts whose answers were not
/// cached yet have had their first query window; when another program already browses the
/// type, it comes at once, after the cached instances.
///
/// Names and interface indexes come from the network and the daemon: at most `capacity`
/// pairs are kept on each side; beyond that the gate gives up (`isUsable` false) and the
/// caller's other rule (a quiet period) decides.
public struct AllForNowGate: Sendable {
    /// An instance name on one interface, as both browsers report it.
    public struct Sighting: Hashable, Sendable {
        public let name: String
        public let interfaceIndex: UInt32
        public init(name: String, interfaceIndex: UInt32) {
            self.name = name
            self.interfaceIndex = interfaceIndex
        }
    }

    /// How many sightings each side keeps at most.
    public let capacity: Int
    private var expected: Set<Sighting> = []
    private var seen: Set<Sighting> = []
    private var saidAllForNow = false
    /// False once a side overflowed or the daemon's browser failed: the signal cannot be trusted.
    public private(set) var isUsable = true

    public init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// The daemon's browser found (`added`) or lost an instance on an interface.
    public mutating func daemonFound(_ sighting: Sighting, added: Bool) {
        if added {
            if isUsable && !Self.insert(sighting, into: &expected, capacity: capacity) { isUsable = false }
        } else {
            expected.remove(sighting)
        }
    }

    /// The dns_sd browse reported the instance on that interface (added or removed: either way
    /// the browse has caught up with it).
    public mutating func listed(_ sighting: Sighting) {
        if isUsable && !Self.insert(sighting, into: &seen, capacity: capacity) { isUsable = false }
    }

    /// The daemon's browser said "all for now".
    public mutating func allForNow() {
        saidAllForNow = true
    }

    /// The daemon's browser failed or went away: only the other rule can end the batch.
    public mutating func giveUp() {
        isUsable = false
    }

    /// Whether the first batch is complete: the signal came and the dns_sd browse has reported
    /// everything the daemon's browser found.
    public var isComplete: Bool {
        isUsable && saidAllForNow && expected.isSubset(of: seen)
    }

    /// Adds `sighting` unless `set` is full; false when it did not fit.
    private static func insert(_ sighting: Sighting, into set: inout Set<Sighting>, capacity: Int) -> Bool {
        guard set.count < capacity || set.contains(sighting) else { return false }
        set.insert(sighting)
        return true
    }
}
