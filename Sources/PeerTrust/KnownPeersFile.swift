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
        // Non-blocking, so that a FIFO in its place is refused instead of waited on.
        let descriptor = retrying { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if descriptor < 0 {
            let code = Glibc.errno
            if code == ENOENT { return KnownPeers() }
            throw .systemCall("open", path: path, errno: code, advice: "make it readable, or move it away to start with no pins")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .systemCall("fstat", path: path, errno: Glibc.errno, advice: "move it away to start with no pins")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw PeerTrustError("'\(path)' is not a regular file; move it away to start with no pins")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        // One byte more than the limit tells whether the file ends within it.
        while bytes.count <= Self.maximumBytes {
            let wanted = min(chunk.count, Self.maximumBytes + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { buffer in retrying { read(descriptor, buffer.baseAddress, wanted) } }
            if count < 0 {
                throw .systemCall("read", path: path, errno: Glibc.errno, advice: "make it a readable file, or move it away to start with no pins")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        let isWhole = bytes.count <= Self.maximumBytes
        if !isWhole { bytes.removeLast() }
        return KnownPeers(parsing: bytes, isWhole: isWhole)
    }

    /// Replaces the file with `peers`, atomically (see the type's summary).
    /// - Throws: `PeerTrustError` when `peers` was read from an incomplete file (writing it
    ///   back would lose lines), or a system call fails.
    public func save(_ peers: KnownPeers) throws(PeerTrustError) {
        if let incompleteness = peers.incompleteness {
            throw PeerTrustError("cannot rewrite '\(path)': \(incompleteness), and writing it back would lose what was not read; shorten it by hand (each line '<service> <key>')")
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        try makeDirectory(directory.isEmpty ? "/" : directory)
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        guard descriptor >= 0 else {
            throw .systemCall("open", path: temporary, errno: Glibc.errno, advice: "make its directory writable")
        }
        do throws(PeerTrustError) {
            defer { close(descriptor) }
            // The umask may only take bits away; make the mode exactly 0600 all the same.
            guard fchmod(descriptor, 0o600) == 0 else { throw .systemCall("fchmod", path: temporary, errno: Glibc.errno, advice: "check the file system") }
            let bytes = peers.bytes
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { buffer in retrying { write(descriptor, buffer.baseAddress, buffer.count) } }
                guard count > 0 else { throw .systemCall("write", path: temporary, errno: Glibc.errno, advice: "free some disk space") }
                written += count
            }
            guard retrying({ fsync(descriptor) }) == 0 else { throw .systemCall("fsync", path: temporary, errno: Glibc.errno, advice: "check the disk") }
            guard rename(temporary, path) == 0 else { throw .systemCall("rename", path: path, errno: Glibc.errno, advice: "make it and its directory writable") }
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename itself reaches the disk with the directory.
        let directoryDescriptor = retrying { open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if directoryDescriptor >= 0 {
            _ = retrying { fsync(directoryDescriptor) }
            close(directoryDescriptor)
        }
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

    /// Creates `directory` and missing parents with mode 0700.
    private func makeDirectory(_ directory: String) throws(PeerTrustError) {
        var status = stat()
        if stat(directory, &status) == 0 { return }
        if let slash = directory.lastIndex(of: "/"), slash > directory.startIndex {
            try makeDirectory(String(directory[..<slash]))
        }
        guard mkdir(directory, 0o700) == 0 || Glibc.errno == EEXIST else {
            throw .systemCall("mkdir", path: directory, errno: Glibc.errno, advice: "create it, mode 0700, or make its parent writable")
        }
    }

    /// Repeats a call interrupted by a signal (EINTR).
    private func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }
}
