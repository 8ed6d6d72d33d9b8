import Glibc

extension FileTransfers {
    /// Opens a file to be sent: read-only, and only a regular file (a directory, a FIFO or a
    /// device is refused).
    /// - Returns: the open descriptor, which the caller closes, the file's size, and its
    ///   resume tag (`resumeTag(of:)`).
    /// - Throws: `FileError` "cannot send PATH: REASON", with the system's reason.
    static func openForSending(_ path: String) throws(FileError) -> (fd: Int32, size: UInt64, tag: [UInt8]) {
        // O_NONBLOCK: opening a FIFO (a `/send` of the wrong path) must not wait for a writer;
        // it is refused below as not a regular file (for which the flag does nothing).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0 else {
            let reason = fd < 0 ? String(cString: strerror(errno)) : (info.st_mode & S_IFMT) == S_IFDIR ? "it is a directory" : "not a regular file"
            if fd >= 0 { close(fd) }
            throw FileError("cannot send \(path): \(reason)")
        }
        return (fd, UInt64(info.st_size), resumeTag(of: info))
    }

    /// What a streamed offer names the file by, so that the receiver resumes its data: the
    /// SHA-256 of the file's device, inode, size, modification time and status change time
    /// (both to the nanosecond). It stays the same while the file is unchanged, whatever path
    /// it is sent by, and changes when the file is written, even when the modification time is
    /// set back (`cp -p`, `touch -r`, `rsync -t`: the change time cannot be set); it tells the
    /// receiver none of those numbers.
    /// Nothing is trusted by it: the receiver checks the whole file against the digest that
    /// comes with `FILE_END` (a file changed without a new time fails that check, and its
    /// partial data is removed).
    static func resumeTag(of info: stat) -> [UInt8] {
        var fields: [UInt8] = Array("svc resume tag 2".utf8)
        for value in [UInt64(info.st_dev), UInt64(info.st_ino), UInt64(info.st_size),
                      UInt64(bitPattern: Int64(info.st_mtim.tv_sec)), UInt64(bitPattern: Int64(info.st_mtim.tv_nsec)),
                      UInt64(bitPattern: Int64(info.st_ctim.tv_sec)), UInt64(bitPattern: Int64(info.st_ctim.tv_nsec))] {
            withUnsafeBytes(of: value.bigEndian) { fields.append(contentsOf: $0) }
        }
        let hash = SHA256()
        hash.update(fields)
        return hash.finish()
    }

    /// The resume tag a streamed offer of the file at `path` carries now, or nil when it
    /// cannot be examined: for finding or preparing the partial data a receiver keeps of it
    /// (tests, fuzzing).
    public static func resumeTag(ofFileAt path: String) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return resumeTag(of: info)
    }

    /// Why a file cannot be sent now (missing, unreadable, a directory, not a regular file),
    /// or nil when it can be opened for sending: for a tool to report a mistyped path before
    /// it connects or queues anything.
    public static func problem(sending path: String) -> FileError? {
        do throws(FileError) {
            let (fd, _, _) = try openForSending(path)
            close(fd)
            return nil
        } catch {
            return error
        }
    }
}
