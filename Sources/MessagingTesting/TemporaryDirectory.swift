import Glibc

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it when the value
/// goes away: inboxes and files to send in tests and fuzz targets.
public final class TemporaryDirectory {
    public let path: String

    /// - Throws: the `errno` of `mkdtemp` when the directory cannot be made.
    public init(prefix: String = "svc-test") throws(TemporaryDirectoryError) {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw TemporaryDirectoryError(errno: errno, base: base)
        }
        path = String(cString: made)
    }

    deinit { TemporaryDirectory.remove(path) }

    /// Writes `bytes` to a file in the directory and returns its path.
    @discardableResult
    public func write(_ bytes: [UInt8], to name: String) -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "cannot create \(file): \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            precondition(count > 0, "cannot write \(file): \(String(cString: strerror(errno)))")
            written += count
        }
        return file
    }

    /// The contents of a file, or nil when it cannot be read.
    public static func read(_ file: String) -> [UInt8]? {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// The names in a directory, without `.` and `..`.
    public static func names(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for name in names(in: path) { remove(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// A temporary directory could not be made.
public struct TemporaryDirectoryError: Error, CustomStringConvertible {
    public let errno: Int32
    public let base: String
    public var description: String {
        "cannot make a temporary directory in \(base): \(String(cString: strerror(errno))) (errno \(errno)); set TMPDIR to a writable directory"
    }
}
