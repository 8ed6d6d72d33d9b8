/// Which member names belong to which keys, for the life of a room: a name belongs to the
/// first key that joined with it, and from then on no other key, and no member without a key,
/// gets it, also while its owner is away. One key may own several names.
///
/// Names are compared by `MemberName.comparisonKey` (as `Roster` compares them); keys are
/// opaque strings (a `PublicKeyFingerprint`'s full form).
///
/// Bounds: `capacity` names in the room and `perHost` from one host. Keys cost nothing to make,
/// so a peer can bind names as fast as it joins and leaves; when a new name needs a place and
/// the bound is reached, the binding made most recently among those whose member is away is
/// let go (of that host, for the per-host bound). The bindings of a churning peer are the
/// newest, so they go first and older members keep their names; a name held by a member who is
/// in the room is never let go. Only when every binding within the bound is present (more
/// members than the room admits) is the new name refused.
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
        var isPresent: Bool
    }

    /// Names bound at most in the room.
    public let capacity: Int
    /// Names bound at most by the members of one host (`IPAddress.hostKey`).
    public let perHost: Int
    private var bindingByName: [String: Binding] = [:]
    private var countByHost: [String: Int] = [:]
    private var nextOrder: UInt64 = 0

    public init(capacity: Int = 4096, perHost: Int = 64) {
        self.capacity = max(0, capacity)
        self.perHost = max(0, perHost)
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

    /// Binds the name with this comparison key to `key`, counted for `host`, and marks its
    /// member present; a name already bound to `key` is only marked present. At a bound, the
    /// newest binding whose member is away is let go first.
    /// - Returns: the comparison key of the binding let go to make room, if any.
    /// - Throws: `.roomFull` or `.hostFull` when every binding within the bound is present;
    ///   nothing changes then.
    @discardableResult
    public mutating func bind(_ comparisonKey: String, to key: String, host: String) throws(Refusal) -> String? {
        if let existing = bindingByName[comparisonKey] {
            if existing.owner == key { bindingByName[comparisonKey]?.isPresent = true }
            return nil
        }
        var letGo: String?
        if countByHost[host, default: 0] >= perHost {
            guard let newest = newestAway(from: host) else { throw .hostFull }
            remove(newest)
            letGo = newest
        }
        if bindingByName.count >= capacity {
            guard let newest = newestAway(from: nil) else { throw .roomFull }
            remove(newest)
            letGo = newest
        }
        bindingByName[comparisonKey] = Binding(owner: key, host: host, order: nextOrder, isPresent: true)
        nextOrder += 1
        countByHost[host, default: 0] += 1
        return letGo
    }

    /// The member holding this name under `key` left: the name stays its own, but counts as
    /// away (see the bounds above).
    public mutating func left(_ comparisonKey: String, key: String) {
        guard bindingByName[comparisonKey]?.owner == key else { return }
        bindingByName[comparisonKey]?.isPresent = false
    }

    /// The newest binding whose member is away, of `host` or of any host.
    private func newestAway(from host: String?) -> String? {
        var newest: (name: String, order: UInt64)?
        for (name, binding) in bindingByName where !binding.isPresent && (host == nil || binding.host == host) {
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
