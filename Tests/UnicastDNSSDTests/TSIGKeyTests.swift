import Foundation
import UnicastDNSSD
import XCTest

final class TSIGKeyTests: XCTestCase {
    let generated = """
    key "svc-lab" {
    \talgorithm hmac-sha256;
    \tsecret "2lVpbcu8S5uQZ0Q7D0MuvFiSVQhT+31zg5gEbKm5RcY=";
    };

    """

    func testReadsWhatTsigKeygenWrites() throws {
        let key = try TSIGKey(parsing: generated, source: "k")
        XCTAssertEqual(key.name.description, "svc-lab.")
        XCTAssertEqual(key.algorithm, .hmacSHA256)
    }

    func testDescriptionNeverShowsTheSecret() throws {
        let key = try TSIGKey(parsing: generated, source: "k")
        XCTAssertFalse("\(key)".contains("2lVpbcu8"))
        XCTAssertFalse(String(reflecting: key).contains("2lVpbcu8"))
        XCTAssertEqual("\(key)", "TSIG key svc-lab. (hmac-sha256, secret hidden)")
    }

    func testRejectsWhatIsNotOneKeyStatement() {
        let cases: [(String, String)] = [
            ("", "expected 'key' but found the end"),
            (generated + generated, "more than one statement"),
            (generated.replacingOccurrences(of: "hmac-sha256", with: "hmac-sha3"), "unknown algorithm at token 5"),
            (generated.replacingOccurrences(of: "\tsecret \"2lVpbcu8S5uQZ0Q7D0MuvFiSVQhT+31zg5gEbKm5RcY=\";\n", with: ""), "no secret line"),
            (generated.replacingOccurrences(of: "2lVpbcu8", with: "!!!!!!!!"), "the secret is not base64"),
            (generated.replacingOccurrences(of: "algorithm", with: "algo!rithm"), "an unterminated quoted string or an unexpected character"),
            (generated.replacingOccurrences(of: "2lVpbcu8", with: "2lVpbcu"), "the secret is not base64"),
            (generated.replacingOccurrences(of: "};", with: "}"), "expected ';' but found the end"),
            (generated.replacingOccurrences(of: "\"svc-lab\"", with: "\"svc\\\\lab\""), "an unterminated quoted string or an unexpected character"),
            (generated.replacingOccurrences(of: "algorithm", with: "owner"), "unknown statement at token 4"),
            (String(repeating: " ", count: TSIGKey.maximumFileSize) + generated, "longer than 4096 bytes"),
            // A secret out of its place is named by its place, never printed.
            ("key \"svc-lab\" { algorithm \"2lVpbcu8S5uQZ0Q7D0MuvFiSVQhT+31zg5gEbKm5RcY=\"; secret hmac-sha256; };", "unknown algorithm at token 5"),
            ("key svc-lab { 2lVpbcu8S5uQZ0Q7D0MuvFiSVQhT+31zg5gEbKm5RcY= secret; };", "unknown statement at token 4"),
            ("key svc-lab { algorithm hmac-sha256 2lVpbcu8S5uQZ0Q7D0MuvFiSVQhT+31zg5gEbKm5RcY=; };", "expected ';' but found a word at token 6"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try TSIGKey(parsing: text, source: "/k")) { error in
                let error = error as! UnicastDNSSDError
                XCTAssertEqual(error.code, .keyFile)
                XCTAssertTrue(error.message.hasPrefix("/k: "), error.message)
                XCTAssertTrue(error.message.contains(expected), "\(error.message) lacks \(expected)")
                XCTAssertTrue(error.message.hasSuffix("the file must be what 'tsig-keygen -a hmac-sha256 NAME' prints"), error.message)
                XCTAssertFalse(error.message.contains("RcY="), error.message)
            }
        }
    }

    func testLoadRefusesAFileOthersCanRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("key").path
        try Data(generated.utf8).write(to: URL(fileURLWithPath: path))

        for mode in [0o644, 0o640, 0o604, 0o620] {
            XCTAssertEqual(chmod(path, mode_t(mode)), 0)
            XCTAssertThrowsError(try TSIGKey.load(path: path)) { error in
                let error = error as! UnicastDNSSDError
                XCTAssertEqual(error.code, .keyFile)
                XCTAssertTrue(error.message.contains("can be read or written by others (mode \(String(mode, radix: 8)))"), error.message)
                XCTAssertTrue(error.message.contains("run 'chmod 600 \(path)'"), error.message)
            }
        }
        XCTAssertEqual(chmod(path, 0o600), 0)
        XCTAssertEqual(try TSIGKey.load(path: path).algorithm, .hmacSHA256)

        let link = directory.appendingPathComponent("link").path
        XCTAssertEqual(symlink(path, link), 0)
        XCTAssertThrowsError(try TSIGKey.load(path: link)) { error in
            XCTAssertEqual((error as! UnicastDNSSDError).code, .keyFile)
        }
        XCTAssertThrowsError(try TSIGKey.load(path: directory.appendingPathComponent("missing").path)) { error in
            XCTAssertTrue((error as! UnicastDNSSDError).message.contains("No such file or directory (errno 2)"), "\(error)")
        }
    }
}
