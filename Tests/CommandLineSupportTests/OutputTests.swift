import CommandLineSupport
import DNSSD
import XCTest

final class TerminalSafeTests: XCTestCase {
    func testEscapesControlsAndBidiButKeepsText() {
        XCTAssertEqual(TerminalSafe.escape("\u{1B}[31mred\u{7}"), "\\u{1B}[31mred\\u{7}")
        XCTAssertEqual(TerminalSafe.escape("a\u{9B}b\u{7F}"), "a\\u{9B}b\\u{7F}")
        XCTAssertEqual(TerminalSafe.escape("abc\u{202E}def"), "abc\\u{202E}def")
        XCTAssertEqual(TerminalSafe.escape("line\nbreak\r"), "line\\u{A}break\\u{D}")
        XCTAssertEqual(TerminalSafe.escape("a.b\\c 打印机 #1"), "a.b\\c 打印机 #1")
        XCTAssertEqual(TerminalSafe.escape(bytes: [0x61, 0xFF, 0x1B]), "a\u{FFFD}\\u{1B}")
    }
}

final class JSONValueTests: XCTestCase {
    func testSerialisesInOrderWithEscapes() {
        let value = JSONValue.object([
            ("name", .string("a\"b\\c\n\u{1B}é打")), ("port", .integer(42)), ("ok", .bool(true)),
            ("none", .null), ("list", .array([.string("x"), .integer(-1)])), ("bidi", .string("\u{202E}\u{85}")),
        ])
        XCTAssertEqual(value.serialized,
                       #"{"name":"a\"b\\c\n\u001bé打","port":42,"ok":true,"none":null,"list":["x",-1],"bidi":"\u202e\u0085"}"#)
    }
}

final class ExitCodeTests: XCTestCase {
    func testDaemonErrorsMapToSysexits() {
        func code(_ error: DNSSDError.Code) -> Int32 { ToolMain.exitCode(for: DNSSDError(error, "m")).rawValue }
        XCTAssertEqual(code(.busUnreachable), 69)
        XCTAssertEqual(code(.daemonUnreachable), 69)
        XCTAssertEqual(code(.noSuchName), 68)
        XCTAssertEqual(code(.nameConflict), 73)
        XCTAssertEqual(code(.timedOut), 75)
        XCTAssertEqual(code(.internalError), 70)
        XCTAssertEqual(ToolMain.exitCode(for: UsageError("x")).rawValue, 64)
        XCTAssertEqual(ToolMain.exitCode(for: ToolFailure(.noHost, "x")).rawValue, 68)
        XCTAssertEqual(ToolMain.exitCode(for: CancellationError()).rawValue, 70)
    }
}
