#if canImport(Glibc)
import Glibc
#endif

/// Why `known_peers` could not be read or written; the message says what to do.
public struct PeerTrustError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the user: the file, the call, the reason, the way out.
    public let message: String
    /// The errno of the failed system call, or nil when no call failed (e.g. a file that
    /// would lose lines if written back).
    public let errno: Int32?

    public init(_ message: String, errno: Int32? = nil) {
        self.message = message
        self.errno = errno
    }

    /// "open '/x': Permission denied (errno 13)"-style text for a failed call.
    static func systemCall(_ name: String, path: String, errno code: Int32, advice: String) -> PeerTrustError {
        PeerTrustError("\(name) '\(path)': \(String(cString: strerror(code))) (errno \(code)); \(advice)", errno: code)
    }

    public var description: String { message }
}
