/// Names one sender's partial data for one file in `.partial`: the file's SHA-256, its size,
/// and a tag derived from the sender's key (over a secure link) or else its address, as
/// `<sha256 hex>-<size>-<tag>`; for a file relayed by a server,
/// `<sha256 hex>-<size>-<member tag>-<tag>`, where the tag is derived from the server's key or
/// address and its tag for the sender's key or host, and the member tag from the sender's room
/// name. Eviction counts files per last tag: per sender (per key, or per host for a sender
/// without one, for relayed files, whatever names it takes).
///
/// What this protects: a member cannot truncate another's partial data (a different size is a
/// different file), and cannot learn how much of a file someone else has sent by offering its
/// digest (an offer from another address starts a partial of its own at 0, so `FILE_ACCEPT`'s
/// offset only ever reports the asker's own data), and over secure links another key cannot
/// resume or cut short a key's partial data, from whatever address. What it does not: a
/// plaintext peer that takes over the sender's address (the same host, the same NAT, or a
/// spoofed address) is that sender as far as the inbox can tell; and a plaintext sender that
/// moves to another address (IPv4 to IPv6, a new DHCP lease) starts over instead of resuming.
public struct PartialKey: Hashable, Sendable {
    /// The file name inside `.partial` (ASCII letters, digits and `-` only).
    public let name: String
    /// The sender's host as limits count it (`SocketEndpoint.hostKey`); not part of the name.
    public let host: String
    /// The sending member as limits count it: `sender`, and for a relayed file its room name.
    public let member: String

    /// - Parameters:
    ///   - digest: the offered SHA-256 (32 bytes from the wire).
    ///   - size: the offered size.
    ///   - sender: the sender's key, else its address without its port (so a reconnect
    ///     resumes); for a relayed file, the server's key or address with its tag for the
    ///     sender's key or host.
    ///   - member: for a relayed file, the sender's room name.
    ///   - host: the sender's host for per-host limits (the sender's address unless given).
    public init(digest: [UInt8], size: UInt64, sender: String, member: String? = nil, host: String? = nil) {
        self.host = host ?? sender
        self.member = member.map { sender + " as " + $0 } ?? sender
        func tag(_ text: String) -> String {
            let hash = SHA256()
            hash.update(Array(text.utf8))
            return hexString(Array(hash.finish().prefix(8)))
        }
        name = hexString(digest) + "-" + String(size) + "-" + (member.map { tag($0) + "-" } ?? "") + tag(sender)
    }
}
