/// Names one sender's partial data for one file in `.partial`: the file's SHA-256, its size,
/// and a tag derived from the sender's address, as `<sha256 hex>-<size>-<tag>`.
///
/// What this protects: a member cannot truncate another's partial data (a different size is a
/// different file), and cannot learn how much of a file someone else has sent by offering its
/// digest (an offer from another address starts a partial of its own at 0, so `FILE_ACCEPT`'s
/// offset only ever reports the asker's own data). What it does not: peers have no identities
/// yet, so a peer that takes over the sender's address (the same host, the same NAT, or a
/// spoofed address) is the sender as far as the inbox can tell; and a sender that moves to
/// another address (IPv4 to IPv6, a new DHCP lease) starts over instead of resuming.
public struct PartialKey: Hashable, Sendable {
    /// The file name inside `.partial` (ASCII letters, digits and `-` only).
    public let name: String
    /// The sender's host as limits count it (`IPAddress.hostKey`); not part of the name.
    public let host: String

    /// - Parameters:
    ///   - digest: the offered SHA-256 (32 bytes from the wire).
    ///   - size: the offered size.
    ///   - sender: the sender's address without its port (so a reconnect resumes).
    ///   - host: the sender's host for per-host limits (the sender's address unless given).
    public init(digest: [UInt8], size: UInt64, sender: String, host: String? = nil) {
        self.host = host ?? sender
        let tag = SHA256()
        tag.update(Array(sender.utf8))
        name = hexString(digest) + "-" + String(size) + "-" + hexString(Array(tag.finish().prefix(8)))
    }
}
