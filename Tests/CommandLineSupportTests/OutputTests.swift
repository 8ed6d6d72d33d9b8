import CommandLineSupport
import DNSSD
import XCTest

final class JSONValueTests: XCTestCase {
    func testSerialisesInOrderWithEscapes() {
        let value = JSONValue.object([
            ("name", .string("a\"b\\c\n\u{1B}é打")), ("port", .integer(42)), ("ok", .bool(true)),
            ("none", .null), ("list", .array([.string("x"), .integer(-1)])), ("bidi", .string("\u{202E}\u{85}")),
        ])
        XCTAssertEqual(value.serialized,
                       #"{"name":"a\"b\\c\n\u001bé打","port":42,"ok":true,"none":null,"list":["x",-1],"bidi":"\u202e\u0085"}"#)
    }

    /// Every ASCII character, alone among plain letters (the fast path for printable ASCII)
    /// and beside a non-ASCII one (the path that looks at each scalar), is written the same.
    func testEveryASCIICharacterIsEscapedTheSameInPlainAndInOtherText() {
        for value in UInt8(0)...0x7F {
            let expected: String = switch value {
            case 0x22: #"\""#
            case 0x5C: #"\\"#
            case 0x0A: #"\n"#
            case 0x0D: #"\r"#
            case 0x09: #"\t"#
            case 0..<0x20, 0x7F: "\\u00" + (value < 0x10 ? "0" : "") + String(value, radix: 16)
            default: String(UnicodeScalar(value))
            }
            let character = String(UnicodeScalar(value))
            XCTAssertEqual(JSONValue.string("a\(character)b").serialized, "\"a\(expected)b\"", "byte \(value)")
            XCTAssertEqual(JSONValue.string("é\(character)").serialized, "\"é\(expected)\"", "byte \(value)")
        }
    }
}

final class ExitCodeTests: XCTestCase {
    func testDaemonErrorsMapToSysexits() {
        func code(_ error: DNSSDError.Code) -> Int32 { ToolMain.exitCode(for: DNSSDError(error, "m")).rawValue }
        XCTAssertEqual(code(.busUnreachable), 69)
        XCTAssertEqual(code(.daemonUnreachable), 69)
        XCTAssertEqual(code(.noSuchName), 68)
        XCTAssertEqual(code(.nameConflict), 73)
        XCTAssertEqual(code(.timedOut), 69, "the daemon not answering in time is the daemon being unavailable; 75 is a service's host")
        XCTAssertEqual(code(.internalError), 70)
        XCTAssertEqual(ToolMain.exitCode(for: UsageError("x")).rawValue, 64)
        XCTAssertEqual(ToolMain.exitCode(for: ToolFailure(.noHost, "x")).rawValue, 68)
        XCTAssertEqual(ToolMain.exitCode(for: ToolFailure(.untrustedKey, "x")).rawValue, 77, "EX_NOPERM")
        XCTAssertEqual(ToolMain.exitCode(for: ToolFailure(.configuration, "x")).rawValue, 78, "EX_CONFIG")
        XCTAssertEqual(ToolMain.exitCode(for: CancellationError()).rawValue, 70)
    }
}
