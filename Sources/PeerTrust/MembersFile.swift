/// A room's members file on disk (`MemberList`): beside the publisher's identity key
/// (`<directory of the key>/members`, by default `$XDG_CONFIG_HOME/svc/members`), read within
/// its bounds and replaced atomically (mode 0600), as `known_peers` is.
public struct MembersFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The members file beside the identity key at `identityPath`.
    public init(besideIdentity identityPath: String) {
        let directory = identityPath.lastIndex(of: "/").map { String(identityPath[..<$0]) } ?? "."
        path = (directory.isEmpty ? "" : directory) + "/members"
    }

    /// Bytes read at most: `MemberList.maximumLines` lines of `maximumLineLength` bytes.
    public static let maximumBytes = MemberList.maximumLines * (MemberList.maximumLineLength + 1)

    /// Reads the file; a missing file lists nobody.
    /// - Throws: `PeerTrustError` when it exists but cannot be read.
    public func load() throws(PeerTrustError) -> MemberList {
        guard let (bytes, isWhole) = try ConfigFileIO.read(path, maximumBytes: Self.maximumBytes,
                                                           advice: "move it away to start with no members") else { return MemberList() }
        return MemberList(parsing: bytes, isWhole: isWhole)
    }

    /// Replaces the file with `members`, atomically.
    /// - Throws: `PeerTrustError` when `members` was read from an incomplete file (writing it
    ///   back would lose lines), or a system call fails.
    public func save(_ members: MemberList) throws(PeerTrustError) {
        if let incompleteness = members.incompleteness {
            throw PeerTrustError("cannot rewrite '\(path)': \(incompleteness), and writing it back would lose what was not read; shorten it by hand (each line 'SHA256:<key> <name>')")
        }
        try ConfigFileIO.replace(path, with: members.bytes)
    }
}
