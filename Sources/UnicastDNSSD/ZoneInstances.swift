/// The instances of one type in one zone as a browser last listed them, and the new ones still
/// waiting for their turn to be resolved: what each read of the zone adds and removes.
///
/// Names are told apart by their bytes, as DNS and the zone's listing do: two names that are
/// canonically equivalent Unicode (`café` precomposed or not) are two instances.
///
/// With resolving, at most `maximumResolvesPerRead` new names are added by one read (a zone
/// whose serial changes on every read and lists new names each time would otherwise set off
/// thousands of queries per read); the rest wait for the next reads, and keep their place:
/// the names that waited longest come first, then those seen for the first time, in the
/// listing's order. Each name is added once. A waiting name the zone no longer lists is
/// dropped unseen.
public struct ZoneInstances: Sendable {
    /// The most new instances one read hands out to be resolved.
    public static let maximumResolvesPerRead = 64

    /// What one read changed.
    public struct Change: Sendable, Equatable {
        /// The names to list as added now (the longest waiting first).
        public let added: [String]
        /// The names listed before that the zone no longer lists, sorted by their bytes.
        public let removed: [String]
        /// How many new names wait for a later read.
        public let waiting: Int

        public init(added: [String], removed: [String], waiting: Int) {
            (self.added, self.removed, self.waiting) = (added, removed, waiting)
        }
    }

    /// The names listed to the user, by their bytes.
    private var known: [[UInt8]: String] = [:]
    /// New names not listed yet, the longest waiting first.
    private var pending: [String] = []

    public init() {}

    /// Whether new names wait for their turn: the zone must be read again even if unchanged.
    public var hasWaiting: Bool { !pending.isEmpty }

    /// Takes the names one read listed and says what changed since the last.
    /// - Parameter resolving: whether the added names will be resolved (then they are capped).
    public mutating func read(_ names: [String], resolving: Bool) -> Change {
        let listed = Set(names.map { Array($0.utf8) })
        var queued = Set<[UInt8]>()
        var queue: [String] = []
        for name in pending + names {
            let key = Array(name.utf8)
            if listed.contains(key) && known[key] == nil && queued.insert(key).inserted { queue.append(name) }
        }
        let count = resolving ? min(queue.count, Self.maximumResolvesPerRead) : queue.count
        let added = Array(queue.prefix(count))
        pending = Array(queue.dropFirst(count))
        let removed = known.filter { !listed.contains($0.key) }.values.sorted(by: Self.byteOrder)
        known = known.filter { listed.contains($0.key) }
        for name in added { known[Array(name.utf8)] = name }
        return Change(added: added, removed: removed, waiting: pending.count)
    }

    /// Puts back names the last read handed out that were never listed (the browse stopped
    /// before their turn): they wait again, first in line.
    public mutating func putBack(_ names: [String]) {
        for name in names { known[Array(name.utf8)] = nil }
        pending = names + pending
    }

    /// Hands out every waiting name at once, to be listed without resolving (when the browse
    /// can wait no longer), and counts them as listed.
    public mutating func takeWaiting() -> [String] {
        let all = pending
        for name in all { known[Array(name.utf8)] = name }
        pending = []
        return all
    }

    private static func byteOrder(_ one: String, _ other: String) -> Bool {
        one.utf8.lexicographicallyPrecedes(other.utf8)
    }
}
