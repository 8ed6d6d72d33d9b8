import Glibc

/// Bounded, read-only access to files, directories and links: everything svc-doctor reads
/// from /etc, /proc and /sys goes through here, so a huge or endless file (a FIFO, /dev/zero
/// named as a config) costs at most `limit` bytes, and an error says which call failed.
enum SystemFiles {
    /// Bytes read from one file at most (configuration files are a few KiB).
    static let defaultLimit = 1 << 20

    /// The file's bytes as text (invalid UTF-8 becomes U+FFFD), at most `limit` bytes.
    /// - Throws: `FileError` naming the path and the errno.
    static func read(_ path: String, limit: Int = defaultLimit) throws(FileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileError(path: path, call: "open", errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, call: "read", errno: errno)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The target of a symbolic link (e.g. `/proc/PID/fd/3` -> `socket:[1234]`), or nil.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The names in a directory (without `.` and `..`), at most `limit`; empty when it cannot be read.
    static func entries(_ path: String, limit: Int = 100_000) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// A file that could not be read: `open /etc/nsswitch.conf: No such file or directory (errno 2)`.
struct FileError: Error, CustomStringConvertible {
    let path: String
    let call: String
    let errno: Int32
    var description: String { "\(call) \(path): \(String(cString: strerror(errno))) (errno \(errno))" }
}
