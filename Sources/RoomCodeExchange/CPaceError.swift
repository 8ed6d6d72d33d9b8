/// Why a CPace exchange could not start or failed, in words that say what happened and what to do.
///
/// Every failure ends the exchange: its secrets are wiped and later calls throw `.misuse`.
public struct CPaceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure; compare with the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case invalidInput = "invalid input"
            case invalidShareLength = "invalid share length"
            case invalidShare = "invalid share"
            case reflectedShare = "reflected share"
            case invalidTagLength = "invalid tag length"
            case confirmationFailed = "confirmation failed"
            case misuse = "misuse"
            case libsodium = "libsodium failure"
        }
        private let value: Value

        /// A local input (code, channel identifier, session id, associated data) is out of bounds.
        public static let invalidInput = Code(value: .invalidInput)
        /// The peer's share is not exactly `CPace.shareLength` bytes.
        public static let invalidShareLength = Code(value: .invalidShareLength)
        /// The peer's share is the identity element or not a canonical ristretto255 encoding
        /// (the draft's `scalar_mult_vfy` returned G.I: the exchange MUST abort).
        public static let invalidShare = Code(value: .invalidShare)
        /// The peer sent back this party's own share: a reflection, never an honest peer.
        public static let reflectedShare = Code(value: .reflectedShare)
        /// The peer's confirmation tag is not exactly `CPace.tagLength` bytes.
        public static let invalidTagLength = Code(value: .invalidTagLength)
        /// The peer's confirmation tag is wrong: a different code, a different TLS session
        /// (a relay), different keys or roles, or a changed message.
        public static let confirmationFailed = Code(value: .confirmationFailed)
        /// A call out of order, or after the exchange finished or failed.
        public static let misuse = Code(value: .misuse)
        /// libsodium could not be set up or failed where it should not.
        public static let libsodium = Code(value: .libsodium)

        public var description: String { value.rawValue }
    }

    public let code: Code
    /// The whole explanation.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
