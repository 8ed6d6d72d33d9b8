/// The instances of one type in one zone as a browser last listed them, and the new ones still
/// waiting for their turn to be resolved: what each read of the zone adds and removes.
///
/// With resolving, at most `maximumResolvesPerRead` new names are added by one read (a zone
/// whose serial changes on every read and lists new names each time would otherwise set off
/// thousands of queries per read); the rest wait for the next reads, in the listing's order,
/// and each name is added once. A waiting name the zone no longer lists is dropped unseen.
public struct ZoneInstances: Sendable {
    /// The most new instances one read hands out to be resolved.
    public static let maximumResolvesPerRead = 64

    /// What one read changed.
    public struct Change: Sendable, Equatable {
        /// The names to list as added now (in the listing's order).
        public let added: [String]
        /// The names listed before that the zone no longer lists, sorted.
        public let removed: [String]
        /// How many new names wait for a later read.
        public let waiting: Int

        public init(added: [String], removed: [String], waiting: Int) {
            (self.added, self.removed, self.waiting) = (added, removed, waiting)
        }
    }

    private var known = Set<String>()
    private var pending: [String] = []

    public init() {}

    /// Whether new names wait for their turn: the zone must be read again even if unchanged.
    public var hasWaiting: Bool { !pending.isEmpty }

    /// Takes the names one read listed and says what changed since the last.
    /// - Parameter resolving: whether the added names will be resolved (then they are capped).
    public mutating func read(_ names: [String], resolving: Bool) -> Change {
        var added = names.filter { !known.contains($0) }
        pending = []
        if resolving && added.count > Self.maximumResolvesPerRead {
            pending = Array(added.dropFirst(Self.maximumResolvesPerRead))
            added = Array(added.prefix(Self.maximumResolvesPerRead))
        }
        let listed = Set(names).subtracting(pending)
        let removed = known.subtracting(listed).sorted()
        known = listed
        return Change(added: added, removed: removed, waiting: pending.count)
    }
}
