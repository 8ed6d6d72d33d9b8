/// Why text is not a room code, or why a code cannot be made, in words that say what to do.
///
/// Messages never repeat the text typed (it reaches a terminal); they name positions.
public struct RoomCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure; compare with the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case empty
            case tooLong = "too long"
            case notADigit = "not a digit"
            case wrongLength = "wrong number of digits"
            case typo
        }
        private let value: Value

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
