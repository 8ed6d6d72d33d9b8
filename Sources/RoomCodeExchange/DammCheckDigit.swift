/// The Damm check digit (H. M. Damm, 2004): one decimal digit that catches every single-digit
/// error and every swap of two adjacent digits, so a mistyped room code is refused before it
/// costs an attempt. Pure.
enum DammCheckDigit {
    /// A totally anti-symmetric quasigroup of order 10 with a zero diagonal (Damm's table).
    private static let table: [[UInt8]] = [
        [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
        [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
        [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
        [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
        [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
        [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
        [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
        [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
        [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
        [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
    ]

    /// The interim digit after `digits` (each 0...9); appending it makes the result valid.
    static func checkDigit(for digits: [UInt8]) -> UInt8 {
        digits.reduce(0) { interim, digit in table[Int(interim)][Int(digit % 10)] }
    }

    /// True when `digits` (each 0...9, the last one the check digit) ends in interim 0.
    static func isValid(_ digits: [UInt8]) -> Bool {
        !digits.isEmpty && checkDigit(for: digits) == 0
    }
}
