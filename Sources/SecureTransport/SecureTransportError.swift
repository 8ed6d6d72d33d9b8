/// Why an identity key could not be used or a TLS stream could not be set up, in words that
/// say what to do.
///
/// Failures during a handshake are not thrown: the stream closes with
/// `Connection.CloseReason.failed` whose text says what happened (see `TLSStream`).
public struct SecureTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure; compare with the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case keyFileTooOpen = "key file too open"
            case keyFileNotOwned = "key file not owned"
            case keyFileUnusable = "key file unusable"
            case notAKey = "not a key"
            case openSSL = "OpenSSL failure"
        }
        private let value: Value

        /// The key file has a group or other permission bit set.
        public static let keyFileTooOpen = Code(value: .keyFileTooOpen)
        /// The key file belongs to another user.
        public static let keyFileNotOwned = Code(value: .keyFileNotOwned)
        /// The key file (or its directory) cannot be read, created or written.
        public static let keyFileUnusable = Code(value: .keyFileUnusable)
        /// The file holds no private key that svc can use.
        public static let notAKey = Code(value: .notAKey)
        /// OpenSSL failed where it should not (out of memory, a broken installation).
        public static let openSSL = Code(value: .openSSL)

        public var description: String { value.rawValue }
    }

    public let code: Code
    /// The whole explanation, including what to do.
    public let message: String
    /// The errno behind a file failure, or 0.
    public let errno: Int32

    init(_ code: Code, _ message: String, errno: Int32 = 0) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    public var description: String { message }
}
