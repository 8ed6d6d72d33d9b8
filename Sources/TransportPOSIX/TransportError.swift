import Glibc

/// A socket-level failure: the failing call and its errno, printed like
/// `bind: Address already in use (errno 98)`, or a higher-level condition with its own text.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed (e.g. "connect"), or a short phrase for non-errno errors.
    public let call: String
    /// The errno value, or 0 when the error did not come from a system call.
    public let errno: Int32
    private let detail: String?

    /// An error from a system call; the text comes from `strerror`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
        self.detail = nil
    }

    /// An error with its own explanation, and the errno it stands for if one does (0 if not).
    public init(_ call: String, message: String, errno: Int32 = 0) {
        self.call = call
        self.errno = errno
        self.detail = message
    }

    public var description: String {
        if let detail { return "\(call): \(detail)" }
        return "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// ECONNRESET / EPIPE: the peer closed abruptly.
    public var isReset: Bool { errno == ECONNRESET || errno == EPIPE }

    /// ECONNREFUSED: the host answered, and nothing listens on the port.
    public var isRefused: Bool { errno == ECONNREFUSED }
}
