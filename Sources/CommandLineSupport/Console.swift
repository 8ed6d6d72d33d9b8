import Glibc
import Synchronization

/// Writes whole lines to stdout (results) and stderr (diagnostics), unbuffered and never
/// interleaved, from any thread.
public enum Console {
    private static let lock = Mutex(())

    /// Prints a result line on stdout.
    public static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }

    /// Prints a diagnostic line on stderr, prefixed with the tool's name.
    public static func note(_ line: String) { write("\(toolName): \(line)\n", to: STDERR_FILENO) }

    /// Prints `<tool>: error: <message>` on stderr.
    public static func error(_ message: String) { write("\(toolName): error: \(message)\n", to: STDERR_FILENO) }

    /// Writes text as it is (e.g. help on stdout, usage on stderr).
    public static func raw(_ text: String, toStandardError: Bool = false) {
        write(text, to: toStandardError ? STDERR_FILENO : STDOUT_FILENO)
    }

    /// The program's name, as it appears in diagnostics.
    public static var toolName: String {
        let path = CommandLine.arguments.first ?? "svc"
        return String(path.split(separator: "/").last ?? Substring(path))
    }

    private static func write(_ text: String, to fd: Int32) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return } // stdout closed: nothing more can be said
                bytes = bytes.dropFirst(written)
            }
        }
    }
}

/// The current UTC time as ISO 8601 with milliseconds, e.g. `2026-11-29T16:40:00.123Z`.
public func timestampNow() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var parts = tm()
    var seconds = now.tv_sec
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
        + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
}
