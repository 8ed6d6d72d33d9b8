import Glibc
import MessagingCore
import Synchronization

/// The directory received files are stored in. Data arrives in `.partial/<key>` and is linked
/// to its final name only after the checksum matched and the data reached the disk, so nothing
/// that looks complete is ever half-written; a broken transfer's partial data stays there to
/// be resumed by the same sender (see `PartialKey`).
///
/// The directory and `.partial` are opened once; every file is created, linked, examined and
/// removed relative to those descriptors without following symbolic links, so nothing planted
/// in the inbox can redirect a write. Directories that other users can write are refused.
///
/// One inbox is shared by every member of a room: it counts their transfers and the disk space
/// promised to them against `Limits` (docs/PROTOCOL.md, "Files: bounds" in README.md).
///
/// Content it stored is not stored twice for the same sender: an offer of a file it already
/// holds from that sender, unchanged, is answered with that file's name (`existing(_:size:)`).
///
/// - Important: thread-safe. The descriptors never change after `init`; the counts are behind
///   a `Mutex`.
public final class Inbox: Sendable {
    /// What the inbox lets peers spend. Every number here is a bound a hostile peer meets.
    public struct Limits: Sendable, Hashable {
        /// Files one member may have arriving at once, i.e. accepted and still waiting for data
        /// (its further offers are refused). Files already complete and being verified count
        /// only toward `transfers`.
        public var transfersPerMember = 4
        /// Files all members together may send at once.
        public var transfers = 32
        /// Files all members of one host (an IPv4 address, an IPv6 /64 or a link-local
        /// address: `SocketEndpoint.hostKey`) may send at once: eight members of one host cannot take all the places.
        public var transfersPerHost = 16
        /// Bytes a transfer must bring in every `transferIdleTimeout` (or all it still needs,
        /// when that is less): a byte a minute does not keep a place and its promised space.
        public var transferMinimumProgress: UInt64 = 1 << 20
        /// Free space that offers may never use up: an offer is refused when the bytes it still
        /// needs, plus what the transfers under way still need, would leave less than this free.
        public var diskReserve: UInt64 = 64 << 20
        /// Free inodes that offers may never use up (each stored file takes one, however
        /// small: an empty file costs no bytes but still a file).
        public var inodeReserve: UInt64 = 10_000
        /// A file that gets no data for this long is ended (refused, its data kept for
        /// resuming), so that a sender that offers and then stalls gives its slot back.
        public var transferIdleTimeout: Duration = .seconds(60)
        /// Partial data untouched this long is removed.
        public var partialMaximumAge: Duration = .seconds(7 * 24 * 3600)
        /// Partial files kept at most (the oldest not in use go first).
        public var partialMaximumCount = 64
        /// Bytes of partial data kept at most (the oldest files not in use go first).
        public var partialMaximumBytes: UInt64 = 32 << 30

        /// The defaults above.
        public init() {}
    }

    /// The path given to `init`, for messages; files are reached through `directoryFD`.
    public let directory: String
    /// What peers may spend here, fixed when the inbox is opened.
    public let limits: Limits
    /// `O_DIRECTORY|O_NOFOLLOW` descriptors of the inbox and its `.partial` directory, owned
    /// for the inbox's life.
    let directoryFD: Int32
    let partialFD: Int32
    /// The transfers under way: their partial file, and the bytes they may still write.
    let state = Mutex(Promises())
    /// For each stored base name, the variant number to try first next time (`store`).
    private let nextVariant = Mutex<[String: Int]>([:])
    /// Files stored by this process, by content and sender (`PartialKey`), to answer an offer of the same content from the same sender with
    /// the file already there (`existing(_:size:)`); at most `storedFilesRemembered`.
    let stored = Mutex(StoredFiles())

    /// Opens the inbox, creating it (mode 0755) and its `.partial` directory (mode 0700) when
    /// missing, and removes partial data that is too old or beyond the limits.
    /// - Throws: `FileError` when a directory cannot be created or opened, is a symbolic link,
    ///   is not owned by this user, or can be written by other users.
    public init(directory: String, limits: Limits = Limits()) throws(FileError) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.limits = limits
        if mkdir(self.directory, 0o755) != 0 && errno != EEXIST {
            throw FileError("cannot create the inbox directory \(self.directory): \(String(cString: strerror(errno)))")
        }
        directoryFD = try Self.openDirectory(AT_FDCWD, self.directory, shownAs: self.directory)
        let partialPath = self.directory + "/.partial"
        if mkdirat(directoryFD, ".partial", 0o700) != 0 && errno != EEXIST {
            let reason = String(cString: strerror(errno))
            close(directoryFD)
            throw FileError("cannot create \(partialPath): \(reason)")
        }
        do throws(FileError) {
            partialFD = try Self.openDirectory(directoryFD, ".partial", shownAs: partialPath)
        } catch {
            close(directoryFD)
            throw error
        }
        removeStalePartials(makingRoomFor: 0)
    }

    deinit {
        close(partialFD)
        close(directoryFD)
    }

    /// Opens a directory without following a link in its last component, and checks that
    /// only this user can change what is in it.
    private static func openDirectory(_ base: Int32, _ path: String, shownAs shown: String) throws(FileError) -> Int32 {
        let fd = openat(base, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno == ELOOP || errno == ENOTDIR
                ? "it is a symbolic link or not a directory; give the real directory's path"
                : String(cString: strerror(errno))
            throw FileError("cannot open the inbox directory \(shown): \(reason)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FileError("cannot examine the inbox directory \(shown): \(reason)")
        }
        let mode = info.st_mode & 0o7777
        var problem: String?
        if info.st_uid != geteuid() {
            problem = "it belongs to user id \(info.st_uid), not to this user (\(geteuid())); use a directory of your own"
        } else if mode & 0o022 != 0 {
            problem = "other users can write to it (mode \(String(mode, radix: 8))); run 'chmod go-w \(shown)' or use another directory"
        } else if faccessat(fd, ".", W_OK, 0) != 0 {
            problem = "this user cannot write to it (\(String(cString: strerror(errno))))"
        }
        if let problem {
            close(fd)
            throw FileError("refusing the inbox directory \(shown): \(problem)")
        }
        return fd
    }

    /// Bytes free for an unprivileged writer in the inbox's file system, or nil when unknown.
    /// Inodes free for an unprivileged writer, or nil when the file system does not say
    /// (some report 0 total: they have no fixed number).
    func freeInodes() -> UInt64? {
        var stats = statvfs()
        guard fstatvfs(directoryFD, &stats) == 0, stats.f_files > 0 else { return nil }
        return UInt64(stats.f_favail)
    }

    func freeBytes() -> UInt64? {
        var stats = statvfs()
        guard fstatvfs(directoryFD, &stats) == 0 else { return nil }
        let (bytes, overflow) = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
        return overflow ? UInt64.max : bytes
    }

    /// Gives a partial file its final name: the sanitised offered name, or a ` (2)`-style
    /// variant when taken. `linkat` fails rather than replace an existing file, so nothing is
    /// ever overwritten, even by a file that appears meanwhile; the directory is synced so
    /// that the name survives a crash. Call after the data itself was synced.
    /// - Throws: `FileError` when the name cannot be created or made durable (nothing is
    ///   stored then).
    func store(_ key: PartialKey, offeredName: String) throws(FileError) -> String {
        let base = InboxName.sanitized(offeredName)
        // Numbering goes on from where the last file of this name stopped: a thousand files of
        // one name cost a thousand probes, not half a million.
        var number = nextVariant.withLock { $0[base] ?? 1 }
        for _ in 0..<1000 {
            let name = InboxName.variant(base, number: number)
            number += 1
            guard linkat(partialFD, key.name, directoryFD, name, 0) == 0 else {
                guard errno == EEXIST else { throw FileError("cannot store \(name) in \(directory): \(String(cString: strerror(errno)))") }
                continue
            }
            nextVariant.withLock { next in
                if next.count >= 4096 { next.removeAll() } // a cache: forgetting only costs probes
                next[base] = number
            }
            guard fsync(directoryFD) == 0 else {
                let reason = String(cString: strerror(errno))
                unlinkat(directoryFD, name, 0)
                throw FileError("cannot store \(name) in \(directory): syncing the directory failed: \(reason)")
            }
            unlinkat(partialFD, key.name, 0) // if this fails, the stale copy expires like any partial
            return name
        }
        throw FileError("cannot find a free name for \(base) in \(directory)")
    }
}
