#if canImport(Glibc)
import Glibc
#endif
import DiscoveryCore
import TransportCore

/// The `known_peers` file on disk: where it is, reading it within the limits, and writing it
/// atomically.
///
/// A missing file reads as no pins. A write goes to a temporary file in the same directory
/// (mode 0600), which is flushed to disk and renamed over the file, so a crash leaves the old
/// file or the new one, never half of one. The directory is created (mode 0700) when missing.
/// - Important: two processes pinning at the same moment may each write their own version;
///   the later rename wins and the other pin is lost (it is asked for again on the next first
///   contact). Nothing is ever half written.
public struct KnownPeersFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Bytes read at most: `KnownPeers.maximumLines` lines of `maximumLineLength` bytes and
    /// their newlines.
    public static let maximumBytes = KnownPeers.maximumLines * (KnownPeers.maximumLineLength + 1)

    /// `$XDG_CONFIG_HOME/svc/known_peers`, or `$HOME/.config/svc/known_peers` when
    /// XDG_CONFIG_HOME is unset, empty or not an absolute path (as the XDG spec says).
    /// - Throws: `PeerTrustError` when neither variable gives a directory.
    public static func defaultPath(environment: [String: String]) throws(PeerTrustError) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/svc/known_peers"
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw PeerTrustError("cannot tell where known_peers is: neither XDG_CONFIG_HOME nor HOME is set to an absolute path; set HOME")
        }
        return (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.config/svc/known_peers"
    }

    /// The file at the default path of this process's environment.
    public static func standard() throws(PeerTrustError) -> KnownPeersFile {
        var environment: [String: String] = [:]
        for name in ["XDG_CONFIG_HOME", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return KnownPeersFile(path: try defaultPath(environment: environment))
    }

    /// Reads the file (at most `maximumBytes`); a missing file is no pins.
    /// - Throws: `PeerTrustError` when it exists but cannot be read.
    public func load() throws(PeerTrustError) -> KnownPeers {
        guard let (bytes, isWhole) = try ConfigFileIO.read(path, maximumBytes: Self.maximumBytes, advice: "move it away to start with no pins") else {
            return KnownPeers()
        }
        return KnownPeers(parsing: bytes, isWhole: isWhole)
    }

    /// Replaces the file with `peers`, atomically (see the type's summary).
    /// - Throws: `PeerTrustError` when `peers` was read from an incomplete file (writing it
    ///   back would lose lines), or a system call fails.
    public func save(_ peers: KnownPeers) throws(PeerTrustError) {
        if let incompleteness = peers.incompleteness {
            throw PeerTrustError("cannot rewrite '\(path)': \(incompleteness), and writing it back would lose what was not read; shorten it by hand (each line '<service> <key>')")
        }
        try ConfigFileIO.replace(path, with: peers.bytes)
    }

    /// Loads, pins `instance` to `key`, saves. See `KnownPeers.pin(_:for:)`.
    /// - Returns: the pin with its line number.
    /// - Throws: `PeerTrustError` also when the name is one the reader would skip (an invisible
    ///   character, a label it cannot hold): such a line would stop every later first contact.
    @discardableResult
    public func pin(_ key: PublicKeyFingerprint, for instance: ServiceInstance) throws(PeerTrustError) -> KnownPeers.Pin {
        let name = ServiceName(instance)
        guard let readBack = ServiceName(presentation: name.presentation), readBack.labels == name.labels else {
            throw PeerTrustError("the name '\(name.presentation)' cannot be written in known_peers so that it reads back")
        }
        if let oddity = KnownPeers.oddity(in: name) { throw PeerTrustError("known_peers does not take this name: \(oddity)") }
        var peers = try load()
        let pin = peers.pin(key, for: instance)
        try save(peers)
        return pin
    }
}
