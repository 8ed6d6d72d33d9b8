import Glibc

extension FileTransfers {
    /// Opens a file to be sent: read-only, and only a regular file (a directory, a FIFO or a
    /// device is refused).
    /// - Returns: the open descriptor, which the caller closes, and the file's size.
    /// - Throws: `FileError` "cannot send PATH: REASON", with the system's reason.
    static func openForSending(_ path: String) throws(FileError) -> (fd: Int32, size: UInt64) {
        // O_NONBLOCK: opening a FIFO (a `/send` of the wrong path) must not wait for a writer;
        // it is refused below as not a regular file (for which the flag does nothing).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0 else {
            let reason = fd < 0 ? String(cString: strerror(errno)) : (info.st_mode & S_IFMT) == S_IFDIR ? "it is a directory" : "not a regular file"
            if fd >= 0 { close(fd) }
            throw FileError("cannot send \(path): \(reason)")
        }
        return (fd, UInt64(info.st_size))
    }

    /// Why a file cannot be sent now (missing, unreadable, a directory, not a regular file),
    /// or nil when it can be opened for sending: for a tool to report a mistyped path before
    /// it connects or queues anything.
    public static func problem(sending path: String) -> FileError? {
        do throws(FileError) {
            let (fd, _) = try openForSending(path)
            close(fd)
            return nil
        } catch {
            return error
        }
    }
}
