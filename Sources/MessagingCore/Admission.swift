/// Who may join a room (svc-publish `--admit`), decided at the member's HELLO from its key:
/// whether it has one (TLS), whether the room's members file lists it, and whether it passed
/// the room code on this connection.
public enum Admission: String, Sendable, Hashable, CaseIterable {
    /// Everyone (names are still bound to keys).
    case open
    /// Only keys the members file lists; the file's name wins over the one asked for.
    case known
    /// Keys the members file lists, and keys that pass the room code (which are then listed).
    case code

    /// Why a member is refused, or nil when it is admitted.
    /// - Parameter key: the member's key in short form, nil for a member without TLS.
    public func refusal(key: String?, listed: Bool, passedCode: Bool) -> ProtocolError? {
        switch self {
        case .open:
            return nil
        case .code where key == nil:
            return ProtocolError(.codeRequired, "this room needs its room code, which is checked only inside TLS: join without --allow-plaintext, with --room-code")
        case .code:
            guard listed || passedCode else {
                return ProtocolError(.codeRequired, "this room lets in new members only with its room code: ask its owner for it and join with --room-code")
            }
            return nil
        case .known:
            guard key != nil, listed else {
                return ProtocolError(.notAdmitted, "this room lets in only the members its owner listed" +
                                     (key.map { "; ask them to add your key (\($0)) to its members file" } ?? ", by key: join over TLS"))
            }
            return nil
        }
    }
}
