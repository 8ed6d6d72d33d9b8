/// Which member names belong to which keys, for the life of a room: a name belongs to the
/// first key that joined with it, and from then on no other key, and no member without a key,
/// gets it, also while its owner is away. One key may own several names.
///
/// Names are compared by `MemberName.comparisonKey` (as `Roster` compares them); keys are
/// opaque strings (a `PublicKeyFingerprint`'s full form). Bindings are never undone, so both
/// bounds hold for the room's life: a name that cannot be bound is refused rather than handed
/// out unbound (an unbound name could be taken by anyone once its holder leaves: theft by churn).
public struct NameBindings: Sendable {
    /// Why `bind` refused.
    public enum Refusal: Error, Sendable, Hashable {
        /// The room has bound `capacity` names.
        case roomFull
        /// The host has bound `perHost` names.
        case hostFull
    }

    /// Names bound at most in the room.
    public let capacity: Int
    /// Names bound at most by the members of one host (`IPAddress.hostKey`).
    public let perHost: Int
    private var ownerByName: [String: String] = [:]
    private var countByHost: [String: Int] = [:]

    public init(capacity: Int = 4096, perHost: Int = 64) {
        self.capacity = max(0, capacity)
        self.perHost = max(0, perHost)
    }

    /// Names bound.
    public var count: Int { ownerByName.count }

    /// The key that owns the name with this comparison key, if any.
    public func owner(of comparisonKey: String) -> String? { ownerByName[comparisonKey] }

    /// Whether a member holding `key` (nil: no key) may not have the name with this comparison
    /// key: it is bound to another key (to any key, for a member without one).
    public func isTaken(_ comparisonKey: String, by key: String?) -> Bool {
        guard let owner = ownerByName[comparisonKey] else { return false }
        return owner != key
    }

    /// Binds the name with this comparison key to `key`, counted for `host`; a name already
    /// bound to `key` stays as it is.
    /// - Throws: `.roomFull` or `.hostFull` when a new binding would pass a bound; nothing
    ///   changes then.
    public mutating func bind(_ comparisonKey: String, to key: String, host: String) throws(Refusal) {
        guard ownerByName[comparisonKey] == nil else { return }
        guard ownerByName.count < capacity else { throw .roomFull }
        let fromHost = countByHost[host, default: 0]
        guard fromHost < perHost else { throw .hostFull }
        ownerByName[comparisonKey] = key
        countByHost[host] = fromHost + 1
    }
}
