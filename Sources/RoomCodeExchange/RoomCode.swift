/// A room code: decimal digits to read aloud in groups of four, the last digit a Damm check
/// digit (a mistyped or swapped digit is refused before it costs an attempt), e.g.
/// `4829-1530-7719` (11 random digits: about 36.5 bits; one guess per exchange).
///
/// What people type is normalised: spaces, tabs, dashes (also Unicode dashes and the minus
/// sign), dots, underscores and slashes between digits are ignored; digits have no case; any
/// other character is refused. The password the exchange uses is the digits alone, in ASCII.
public struct RoomCode: Sendable, Hashable, CustomStringConvertible {
    /// The digits, without separators, check digit last (ASCII `0`-`9`).
    public let digits: String

    /// How many digits a code may have, check digit included.
    public static let digitCountRange = 8 ... 24
    /// How many groups of four digits `generate` makes by default: 12 digits, about 36.5 bits.
    public static let defaultGroupCount = 3
    /// How many groups `generate` accepts: 8 to 24 digits.
    public static let groupCountRange = 2 ... 6
    /// The most characters `init(parsing:)` reads (separators included).
    public static let maximumInputLength = 64
    /// The digits of a group when the code is shown.
    public static let groupLength = 4

    private static let separators: Set<Unicode.Scalar> = [
        " ", "\t", "-", ".", "_", "/",
        "\u{00A0}", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2212}", "\u{202F}",
    ]

    /// Parses what a person typed.
    ///
    /// - Throws: `RoomCodeError` `.empty`, `.tooLong`, `.notADigit`, `.wrongLength`, `.typo`.
    public init(parsing text: some StringProtocol) throws {
        let scalars = text.unicodeScalars
        var values: [UInt8] = []
        var position = 0
        for scalar in scalars {
            position += 1
            guard position <= Self.maximumInputLength else {
                throw RoomCodeError(.tooLong, "the room code is longer than \(Self.maximumInputLength) characters; a room code has \(Self.digitCountRange.lowerBound) to \(Self.digitCountRange.upperBound) digits")
            }
            if Self.separators.contains(scalar) { continue }
            guard scalar.value >= 0x30, scalar.value <= 0x39 else {
                throw RoomCodeError(.notADigit, "character \(position) of the room code is not a digit: a room code is digits, optionally grouped with spaces or dashes")
            }
            values.append(UInt8(scalar.value - 0x30))
        }
        guard !values.isEmpty else {
            throw RoomCodeError(.empty, "the room code is empty: give the digits the room's owner read out")
        }
        guard Self.digitCountRange.contains(values.count) else {
            throw RoomCodeError(.wrongLength, "the room code has \(values.count) digits; room codes have \(Self.digitCountRange.lowerBound) to \(Self.digitCountRange.upperBound): check it with whoever gave it to you")
        }
        guard DammCheckDigit.isValid(values) else {
            throw RoomCodeError(.typo, "the room code has a typo (its last digit does not check out: a digit is wrong or two are swapped): check it with whoever gave it to you")
        }
        self.init(checkedDigits: values)
    }

    private init(checkedDigits values: [UInt8]) {
        digits = String(decoding: values.map { $0 + 0x30 }, as: UTF8.self)
    }

    /// Makes a new code of `groupCount` groups of four digits from `generator`, the last digit
    /// the check digit.
    ///
    /// - Throws: `RoomCodeError.Code.wrongLength` unless `groupCount` is in `groupCountRange`.
    public static func generate(groupCount: Int = defaultGroupCount, using generator: inout some RandomNumberGenerator) throws -> RoomCode {
        guard groupCountRange.contains(groupCount) else {
            throw RoomCodeError(.wrongLength, "a room code has \(groupCountRange.lowerBound) to \(groupCountRange.upperBound) groups of \(groupLength) digits, not \(groupCount)")
        }
        var values = (0 ..< groupCount * groupLength - 1).map { _ in UInt8.random(in: 0 ... 9, using: &generator) }
        values.append(DammCheckDigit.checkDigit(for: values))
        return RoomCode(checkedDigits: values)
    }

    /// Makes a new code from the system's secure random source (getrandom(2)).
    ///
    /// - Throws: as `generate(groupCount:using:)`.
    public static func generate(groupCount: Int = defaultGroupCount) throws -> RoomCode {
        var generator = SystemRandomNumberGenerator()
        return try generate(groupCount: groupCount, using: &generator)
    }

    /// Says what this is without the secret, so that a code interpolated into a log line by
    /// mistake does not leak: `room code (12 digits)`. Show `spokenForm` on purpose.
    public var description: String { "room code (\(digits.utf8.count) digits)" }

    /// The code to show and read aloud: groups of four digits joined by `-` (the last group
    /// may be shorter), e.g. `4829-1530-7719`.
    public var spokenForm: String {
        var groups: [Substring] = []
        var rest = Substring(digits)
        while !rest.isEmpty {
            groups.append(rest.prefix(Self.groupLength))
            rest = rest.dropFirst(Self.groupLength)
        }
        return groups.joined(separator: "-")
    }

    /// The strength against guessing: log2(10) bits for each digit but the check digit
    /// (about 36.5 bits for the default 12 digits). An attacker gets one guess per exchange.
    public var strengthBits: Double {
        Double(digits.utf8.count - 1) * 3.321928094887362
    }

    /// The password (`PRS`) for CPace: the digits in ASCII, without separators.
    public var passwordBytes: [UInt8] { Array(digits.utf8) }
}
