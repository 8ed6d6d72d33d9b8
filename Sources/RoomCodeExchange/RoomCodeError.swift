/// Why text is not a room code, why a code cannot be made, or why a CPace exchange could not start
/// or failed, in words that say what happened and what to do.
///
/// The module's one error type. Messages never repeat the text typed (it reaches a terminal);
/// they name positions. Every exchange failure ends the exchange: its secrets are wiped and later
/// calls throw `.misuse`.
public struct RoomCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure; compare with the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case empty
            case tooLong = "too long"
            case notADigit = "not a digit"
            case wrongLength = "wrong number of digits"
            case typo
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

        // Reading a room code (`RoomCode`).

        /// No digits at all.
        public static let empty = Code(value: .empty)
        /// More characters than `RoomCode.maximumInputLength`.
        public static let tooLong = Code(value: .tooLong)
        /// A character that is neither a digit nor a separator.
        public static let notADigit = Code(value: .notADigit)
        /// Fewer or more digits than `RoomCode.digitCountRange` (or a group count out of range).
        public static let wrongLength = Code(value: .wrongLength)
        /// The check digit does not match: a digit was mistyped or two were swapped.
        public static let typo = Code(value: .typo)

        // The CPace exchange (`CPace`, `CPaceExchange`).

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
