import SafeText
import XCTest

/// Service instance names as the tools show them (`TerminalSafe.escape(_:mode: .name)`,
/// `quoted`) and as svc-connect takes them back (`unescape`).
final class ServiceNameEscapingTests: XCTestCase {
    func testInvisibleCharactersTabsBackslashesAndQuotesAreEscapedInNames() {
        XCTAssertEqual(TerminalSafe.escape("Living\u{200B} room", mode: .name), "Living\\u{200B} room")
        XCTAssertEqual(TerminalSafe.escape("a\tb\u{AD}c\u{FE0F}d\u{2060}e\u{3164}f\u{2800}", mode: .name),
                       "a\\u{9}b\\u{AD}c\\u{FE0F}d\\u{2060}e\\u{3164}f\\u{2800}")
        XCTAssertEqual(TerminalSafe.escape("bk\\sl.x\"q", mode: .name), "bk\\\\sl.x\\\"q")
        XCTAssertEqual(TerminalSafe.escape("\u{1B}[2J\u{202E}", mode: .name), "\\u{1B}[2J\\u{202E}")
        XCTAssertEqual(TerminalSafe.escape("打印机 #1 👩‍💻", mode: .name), "打印机 #1 👩\\u{200D}💻", "a ZWJ, even in an emoji, is shown")
        XCTAssertEqual(TerminalSafe.escape("Living room", mode: .name), "Living room")
        XCTAssertEqual(TerminalSafe.quoted("x', 'Living room"), "\"x', 'Living room\"")
        XCTAssertEqual(TerminalSafe.quoted("x\", \"Living room"), "\"x\\\", \\\"Living room\"")
        // Text mode is unchanged: tabs, invisible characters and backslashes as they are.
        XCTAssertEqual(TerminalSafe.escape("a\tb\u{200B}c\\d\"", mode: .text), "a\tb\u{200B}c\\d\"")
    }

    /// Every character `isInvisible` names, and every one escaped on a terminal, is shown as
    /// an escape in a name: nothing that draws nothing passes unseen.
    func testEveryInvisibleOrControlCharacterIsEscapedInNames() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let shown = TerminalSafe.escape("a\(scalar)b", mode: .name)
            if UnsafeText.isInvisible(scalar) || UnsafeText.isEscapedOnTerminal(scalar) {
                XCTAssertEqual(shown, "a\\u{" + String(value, radix: 16, uppercase: true) + "}b", UnsafeText.codePoint(scalar))
            }
            XCTAssertEqual(TerminalSafe.unescape(shown), "a\(scalar)b", UnsafeText.codePoint(scalar))
        }
    }

    func testUnescapeTakesBackWhatIsShown() {
        XCTAssertEqual(TerminalSafe.unescape("\"bk\\\\sl.x\\\"q\""), "bk\\sl.x\"q")
        XCTAssertEqual(TerminalSafe.unescape("bk\\\\sl.x\\\"q"), "bk\\sl.x\"q")
        XCTAssertEqual(TerminalSafe.unescape("Living\\u{200B} room"), "Living\u{200B} room")
        XCTAssertEqual(TerminalSafe.unescape("Living\\u{200b} room"), "Living\u{200B} room", "lower-case hex")
        XCTAssertEqual(TerminalSafe.unescape("\\u{001B}"), "\u{1B}", "leading zeros")
        XCTAssertEqual(TerminalSafe.unescape("\"\\u{1B}[2J\""), "\u{1B}[2J")
        XCTAssertEqual(TerminalSafe.unescape("Living room"), "Living room")
        XCTAssertEqual(TerminalSafe.unescape("\"\""), "")
    }

    /// What `.name` escaping never writes is not taken back: it must not stand for a name.
    func testMalformedEscapesAreRefused() {
        let malformed = [
            "\\", "a\\", "\\x41", "\\n", "\\u", "\\u{", "\\u{}", "\\u{1B", "\\u1B", "\\u{1G}", "\\u{ 1B}", "\\u{-1}",
            "\\u{1234567}", "\\u{FFFFFFFFFFFFFFFFFFFF}", "\\u{110000}", "\\u{D800}", "\\u{DFFF}",
            "\\u{41}", "\\u{20}", "\\u{5C}", "\\u{22}", "\\u{E9}", // shown as they are, never escaped
            "a\"b", "\"", "\"abc", "abc\"", "\"a\\\"", "\"a\"b\"",
            "a\u{200B}b", "a\tb", "a\u{1B}b", // raw, where an escape is shown
            "\\u{\\u{1B}}", "\\\\\\u{1B", "\\u{1B}}\"",
        ]
        for text in malformed { XCTAssertNil(TerminalSafe.unescape(text), text) }
    }

    /// unescape(escape(x)) == x, and unescape(quoted(x)) == x, for hostile names.
    func testRoundTripOfHostileNames() {
        var names = [
            "", "\\", "\"", "\\\\", "\\\"", "\"\"", "\\u{1B}", "\\u{200B}", "a\\u{", "\\u{}", "\\u{110000}", "\\u{D800}",
            "x', 'Living room", "x\", \"Living room", "Living\u{200B} room", "\u{1B}]0;t\u{7}\u{202E}\u{2066}\r\n\t",
            "\u{FEFF}\u{AD}\u{34F}\u{180E}\u{E0001}\u{E007F}\u{FE00}\u{E01EF}", "\u{10FFFF}\u{FFFF}\u{FFFD}", "\u{0}", "}{u\\",
            "打印机 \"#1\" \\ 👩‍💻",
        ]
        var generator = SystemRandomNumberGenerator()
        let pieces: [String] = ["\\", "\"", "u", "{", "}", "1", "B", "\u{200B}", "\t", "\u{1B}", "a", " ", "é", "\u{FE0F}", "'"]
        for _ in 0..<2000 {
            names.append(String((0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()))
        }
        for name in names {
            let shown = TerminalSafe.escape(name, mode: .name)
            XCTAssertEqual(TerminalSafe.unescape(shown), name, shown)
            XCTAssertEqual(TerminalSafe.unescape(TerminalSafe.quoted(name)), name, shown)
            XCTAssertTrue(shown.unicodeScalars.allSatisfy { !TerminalSafe.isEscaped($0, .name) }, shown)
            // What the terminal escaping does to the line afterwards changes nothing.
            XCTAssertEqual(TerminalSafe.escape(TerminalSafe.quoted(name)), TerminalSafe.quoted(name))
        }
    }
}
