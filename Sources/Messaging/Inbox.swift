import Glibc
import MessagingCore

/// The directory received files are stored in. Data arrives in `.partial/<sha256>` and is
/// moved to its final name only after the checksum matched, so nothing that looks complete
/// is ever half-written; a broken transfer's partial data stays there to be resumed.
///
/// - Important: used from one queue (the server's or the client's).
public final class Inbox: @unchecked Sendable {
    public let directory: String
    let partialDirectory: String
    /// Digests being received right now; a second transfer of the same file must wait.
    var receiving: Set<[UInt8]> = []

    /// Opens the inbox, creating it and its `.partial` directory when missing.
    /// - Throws: `FileError` when the directory cannot be created or written.
    public init(directory: String) throws(FileError) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        partialDirectory = self.directory + "/.partial"
        for path in [self.directory, partialDirectory] where mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw FileError("cannot create the inbox directory \(path): \(String(cString: strerror(errno)))")
        }
        guard access(partialDirectory, W_OK) == 0 else {
            throw FileError("cannot write to the inbox directory \(self.directory): \(String(cString: strerror(errno)))")
        }
    }

    func partialPath(for digest: [UInt8]) -> String { partialDirectory + "/" + hexString(digest) }

    /// Bytes free for an unprivileged writer in the inbox's file system.
    func freeBytes() -> UInt64? {
        var stats = statvfs()
        guard statvfs(directory, &stats) == 0 else { return nil }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
    }

    /// Gives the partial file its final name: the sanitised offered name, or a ` (2)`-style
    /// variant when taken. `link` fails rather than replace an existing file, so nothing is
    /// ever overwritten, even by a file that appears meanwhile.
    func store(partial: String, offeredName: String) throws(FileError) -> String {
        let base = InboxName.sanitized(offeredName)
        for _ in 0..<1000 {
            let name = InboxName.unique(base) { access(directory + "/" + $0, F_OK) == 0 }
            if link(partial, directory + "/" + name) == 0 {
                unlink(partial)
                return name
            }
            guard errno == EEXIST else { throw FileError("cannot store \(name) in \(directory): \(String(cString: strerror(errno)))") }
        }
        throw FileError("cannot find a free name for \(base) in \(directory)")
    }
}
