import RoomCodeExchange
import XCTest

final class RoomCodeTests: XCTestCase {
    /// A deterministic generator (SplitMix64) so a generated code can be checked exactly.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func testGeneratedCodesRoundTripThroughWhatPeopleType() throws {
        for _ in 0 ..< 200 {
            let code = try RoomCode.generate()
            XCTAssertEqual(code.digits.count, 12)
            XCTAssertTrue(code.spokenForm.wholeMatch(of: /[0-9]{4}-[0-9]{4}-[0-9]{4}/) != nil, code.spokenForm)
            let spaced = code.spokenForm.replacingOccurrences(of: "-", with: " ")
            let enDashed = code.spokenForm.replacingOccurrences(of: "-", with: "\u{2013}")
            for typed in [code.spokenForm, code.digits, spaced, "  \(spaced)\t", enDashed, code.digits.map { "\($0)." }.joined()] {
                XCTAssertEqual(try RoomCode(parsing: typed), code, typed)
            }
            XCTAssertEqual(code.passwordBytes, Array(code.digits.utf8))
            XCTAssertEqual("\(code)", "room code (12 digits)", "interpolation does not show the secret")
        }
    }

    func testSeededGenerationIsReproducibleAndSized() throws {
        var first = SeededGenerator(state: 42)
        var second = SeededGenerator(state: 42)
        XCTAssertEqual(try RoomCode.generate(using: &first), try RoomCode.generate(using: &second))
        for groups in RoomCode.groupCountRange {
            var generator = SeededGenerator(state: UInt64(groups))
            let code = try RoomCode.generate(groupCount: groups, using: &generator)
            XCTAssertEqual(code.digits.count, groups * 4)
            XCTAssertEqual(code.spokenForm.split(separator: "-").count, groups)
            XCTAssertEqual(try RoomCode(parsing: code.spokenForm), code)
        }
        for groups in [0, 1, 7, -1] {
            XCTAssertThrowsError(try RoomCode.generate(groupCount: groups)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .wrongLength)
            }
        }
    }

    func testStrength() throws {
        let code = try RoomCode.generate()
        XCTAssertEqual(code.strengthBits, 11 * log2(10), accuracy: 1e-9)
        XCTAssertEqual(Int(code.strengthBits), 36)
        XCTAssertEqual(try RoomCode.generate(groupCount: 6).strengthBits, 23 * log2(10), accuracy: 1e-9)
    }

    /// Damm's published example: 572 takes the check digit 4.
    func testDammExample() throws {
        XCTAssertNoThrow(try RoomCode(parsing: "5724-5724"), "57245724 ends in interim 0")
        XCTAssertThrowsError(try RoomCode(parsing: "5725-5724"))
    }

    func testEverySingleTypoAndAdjacentSwapIsCaught() throws {
        var generator = SeededGenerator(state: 7)
        for _ in 0 ..< 50 {
            let digits = Array(try RoomCode.generate(using: &generator).digits)
            for index in digits.indices {
                for replacement in "0123456789" where replacement != digits[index] {
                    var typo = digits
                    typo[index] = replacement
                    XCTAssertThrowsError(try RoomCode(parsing: String(typo))) {
                        XCTAssertEqual(($0 as? RoomCodeError)?.code, .typo)
                    }
                }
                if index + 1 < digits.count, digits[index] != digits[index + 1] {
                    var swapped = digits
                    swapped.swapAt(index, index + 1)
                    XCTAssertThrowsError(try RoomCode(parsing: String(swapped))) {
                        XCTAssertEqual(($0 as? RoomCodeError)?.code, .typo)
                    }
                }
            }
        }
    }

    func testJunkIsRefused() {
        let cases: [(String, RoomCodeError.Code)] = [
            ("", .empty),
            ("  - -  ", .empty),
            ("4829-1530-771x", .notADigit),
            ("4829-1530-77l9", .notADigit),
            ("４８２９-1530-7719", .notADigit), // full-width digits
            ("4829\u{0}1530", .notADigit),
            ("\u{1b}[2J48291530", .notADigit),
            ("1234567", .wrongLength),
            (String(repeating: "1", count: 25), .wrongLength),
            (String(repeating: " ", count: 60) + "48291530", .tooLong),
            (String(repeating: "4", count: 10_000), .tooLong),
            ("4829-1530-7714", .typo),
        ]
        for (text, code) in cases {
            XCTAssertThrowsError(try RoomCode(parsing: text), text.debugDescription) { error in
                let roomCodeError = error as? RoomCodeError
                XCTAssertEqual(roomCodeError?.code, code, text.debugDescription)
                // The message never repeats what was typed.
                XCTAssertFalse(roomCodeError?.message.contains("\u{1b}") ?? true)
            }
        }
    }
}
