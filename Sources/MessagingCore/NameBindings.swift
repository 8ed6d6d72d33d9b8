/// Which member names belong to which keys, for the life of a room: a name belongs to the
/// first key that joined with it, and from then on no other key, and no member without a key,
/// gets it, also while its owner is away. One key may own several names.
///
/// Names are compared by `MemberName.comparisonKey` (as `Roster` compares them); keys are
/// opaque strings (a `PublicKeyFingerprint`'s full form).
///
/// Keys cost nothing to make, so the rules keep a peer that joins and leaves from filling the
/// room with names:
/// - a name is kept while its member is away only once it stayed `settling` (20 s) in the
///   room; a member who leaves sooner lets its name go (a churning peer binds nothing);
/// - at most `perHost` names from one address (counted by exact address: a whole IPv6 LAN
///   shares one /64): at that bound the asking key's own newest name of a member who is away
///   is let go, else the address's newest such name (peers that share an address, one machine
///   or a NAT, can push out each other's away names; nobody else's), else `hostFull`;
/// - at most `capacity` names in the room: at that bound the name bound most recently among
///   those whose member is away is let go (else `roomFull`, when every member is present).
/// So taking an away member's name needs the room filled with `capacity` names that each
/// stayed 20 s (with at most `RoomServer`'s member limit in the room at once: over a minute of
/// a thousand connections from many hosts), and even then only the newest away names go.
public struct NameBindings: Sendable {
    /// Why `bind` refused.
    public enum Refusal: Error, Sendable, Hashable {
        /// The room has bound `capacity` names, all of members in the room.
        case roomFull
        /// The host has bound `perHost` names, all of members in the room.
        case hostFull
    }

    private struct Binding: Sendable {
        let owner: String
        let host: String
        /// When it was made, in order: the newest away binding is let go first.
        let order: UInt64
        /// Since when its member is in the room; nil while away.
        var presentSince: ContinuousClock.Instant?
        /// It stayed `settling` once: kept while its member is away.
        var isSettled = false
    }

    /// How long a member must stay for its name to be kept while it is away.
    public let settling: Duration

    /// Names bound at most in the room.
    public let capacity: Int
    /// Names bound at most by the members of one address.
    public let perHost: Int
    private var bindingByName: [String: Binding] = [:]
    private var countByHost: [String: Int] = [:]
    private var nextOrder: UInt64 = 0

    public init(capacity: Int = 4096, perHost: Int = 64, settling: Duration = .seconds(20)) {
        self.capacity = max(0, capacity)
        self.perHost = max(0, perHost)
        self.settling = settling
    }

    /// Names bound.
    public var count: Int { bindingByName.count }

    /// The key that owns the name with this comparison key, if any.
    public func owner(of comparisonKey: String) -> String? { bindingByName[comparisonKey]?.owner }

    /// Whether a member holding `key` (nil: no key) may not have the name with this comparison
    /// key: it is bound to another key (to any key, for a member without one).
    public func isTaken(_ comparisonKey: String, by key: String?) -> Bool {
        guard let owner = bindingByName[comparisonKey]?.owner else { return false }
        return owner != key
    }

    /// Binds the name with this comparison key to `key`, counted for `host`, its member present
    /// from `now`; a name already bound to `key` is only marked present. At a bound, a name of a
    /// member who is away is let go first (see the rules above).
    /// - Returns: the comparison key of the binding let go to make room, if any.
    /// - Throws: `.roomFull` or `.hostFull` when nothing may be let go; nothing changes then.
    @discardableResult
    public mutating func bind(_ comparisonKey: String, to key: String, host: String,
                              at now: ContinuousClock.Instant) throws(Refusal) -> String? {
        if let existing = bindingByName[comparisonKey] {
            if existing.owner == key, existing.presentSince == nil { bindingByName[comparisonKey]?.presentSince = now }
            return nil
        }
        var letGo: String?
        if countByHost[host, default: 0] >= perHost {
            guard let newest = newestAway(where: { $0.host == host && $0.owner == key }) ?? newestAway(where: { $0.host == host })
            else { throw .hostFull }
            remove(newest)
            letGo = newest
        }
        if bindingByName.count >= capacity {
            guard let newest = newestAway(where: { _ in true }) else { throw .roomFull }
            remove(newest)
            letGo = newest
        }
        bindingByName[comparisonKey] = Binding(owner: key, host: host, order: nextOrder, presentSince: now)
        nextOrder += 1
        countByHost[host, default: 0] += 1
        return letGo
    }

    /// The member holding this name under `key` left at `now`: the name stays its own while it
    /// is away if it stayed `settling` (now or before), else it is let go.
    public mutating func left(_ comparisonKey: String, key: String, at now: ContinuousClock.Instant) {
        guard var binding = bindingByName[comparisonKey], binding.owner == key, let since = binding.presentSince else { return }
        if now - since >= settling { binding.isSettled = true }
        guard binding.isSettled else { return remove(comparisonKey) }
        binding.presentSince = nil
        bindingByName[comparisonKey] = binding
    }

    /// The newest binding whose member is away among those that `matches` accepts.
    private func newestAway(where matches: (Binding) -> Bool) -> String? {
        var newest: (name: String, order: UInt64)?
        for (name, binding) in bindingByName where binding.presentSince == nil && matches(binding) {
            if binding.order >= newest?.order ?? 0 { newest = (name, binding.order) }
        }
        return newest?.name
    }

    private mutating func remove(_ comparisonKey: String) {
        guard let binding = bindingByName.removeValue(forKey: comparisonKey) else { return }
        let count = countByHost[binding.host, default: 1] - 1
        countByHost[binding.host] = count > 0 ? count : nil
    }
}
