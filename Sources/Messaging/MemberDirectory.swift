import TransportCore

/// The members a room knows by key (svc-publish's members file): whom `--admit known` lets in,
/// the name each is listed under, and where `--admit code` remembers a key that passed the
/// room code, so that it needs no code again.
///
/// - Important: the room calls it on its queue.
public protocol MemberDirectory: AnyObject, Sendable {
    /// Whether `key` is listed, and its listed name (nil: listed without a name); nil when it
    /// is not listed.
    func listing(for key: PublicKeyFingerprint) -> MemberListing?
    /// The key listed under `name`, or under a name the room counts as the same
    /// (`MemberName.same`); nil when none is. The room keeps such a name for that key alone.
    func holder(ofName name: String) -> PublicKeyFingerprint?
    /// Lists `key` under `name` (it passed the room code).
    /// - Returns: why it could not be written (the room goes on: the member is in for this
    ///   session), or nil.
    func add(_ key: PublicKeyFingerprint, name: String) -> String?
}

/// A key's entry in a `MemberDirectory`.
public struct MemberListing: Sendable, Hashable {
    /// The name it is listed under; nil when the entry has none.
    public let name: String?

    public init(name: String?) { self.name = name }
}
