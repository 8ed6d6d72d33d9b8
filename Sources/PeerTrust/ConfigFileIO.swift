#if canImport(Glibc)
import Glibc
#endif

/// Reading a small configuration file within a bound, and replacing one atomically: what
/// `known_peers` and the members file share.
enum ConfigFileIO {
    /// Reads at most `maximumBytes` of the regular file at `path` (a FIFO or a device in its
    /// place is refused, never waited on); nil when there is no file.
    /// - Returns: the bytes, and whether they are the whole file.
    /// - Throws: `PeerTrustError` naming the call, the path and `advice`.
    static func read(_ path: String, maximumBytes: Int, advice: String) throws(PeerTrustError) -> (bytes: [UInt8], isWhole: Bool)? {
        // Non-blocking, so that a FIFO in its place is refused instead of waited on.
        let descriptor = retrying { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if descriptor < 0 {
            let code = Glibc.errno
            if code == ENOENT { return nil }
            throw .systemCall("open", path: path, errno: code, advice: "make it readable, or " + advice)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .systemCall("fstat", path: path, errno: Glibc.errno, advice: advice)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw PeerTrustError("'\(path)' is not a regular file; \(advice)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        // One byte more than the limit tells whether the file ends within it.
        while bytes.count <= maximumBytes {
            let wanted = min(chunk.count, maximumBytes + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { buffer in retrying { Glibc.read(descriptor, buffer.baseAddress, wanted) } }
            if count < 0 {
                throw .systemCall("read", path: path, errno: Glibc.errno, advice: "make it a readable file, or " + advice)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        let isWhole = bytes.count <= maximumBytes
        if !isWhole { bytes.removeLast() }
        return (bytes, isWhole)
    }

    /// Replaces the file at `path` with `bytes`: written to a temporary file in the same
    /// directory (mode 0600), flushed to disk and renamed over it, so a crash leaves the old
    /// file or the new one, never half of one. The directory is created (mode 0700) when missing.
    /// - Throws: `PeerTrustError` when a system call fails.
    static func replace(_ path: String, with bytes: [UInt8]) throws(PeerTrustError) {
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

    /// Creates `directory` and missing parents with mode 0700.
    private static func makeDirectory(_ directory: String) throws(PeerTrustError) {
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
    private static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }
}
