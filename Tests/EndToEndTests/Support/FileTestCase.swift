import Foundation
import XCTest

/// A test with files: a temporary directory of its own, random files and their SHA-256, and
/// what an inbox holds (whole files, partial data).
class FileTestCase: XCTestCase {
    /// A directory of this test's own, removed after it.
    var directory = ""
    /// How the directory's name starts (it ends with a UUID).
    var directoryPrefix: String { "svc-test" }

    override func setUpWithError() throws {
        try TestLAN.require()
        directory = NSTemporaryDirectory() + directoryPrefix + "-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A key file path of this test's own for `who` (svc-publish and svc-connect `--identity`
    /// make it on first use). Tools without `--identity` share the run's one key, so members
    /// meant as different people need one each.
    func keyFile(_ who: String) -> String { directory + "/\(who).pem" }

    /// A file of random bytes, and its SHA-256 as sha256sum prints it.
    func randomFile(megabytes: Int) throws -> (path: String, sha256: String) {
        let path = directory + "/payload.bin"
        let dd = try ToolProcess("/bin/dd", ["if=/dev/urandom", "of=\(path)", "bs=1M", "count=\(megabytes)", "status=none"])
        XCTAssertEqual(dd.waitForExit(timeout: 60), 0, dd.transcript)
        return (path, try sha256(of: path))
    }

    func sha256(of path: String) throws -> String {
        let sum = try ToolProcess("/usr/bin/sha256sum", [path])
        XCTAssertEqual(sum.waitForExit(timeout: 60), 0)
        return String(try XCTUnwrap(sum.stdout.first?.split(separator: " ").first))
    }

    /// Regular files in the inbox, leaving out the hidden partial data.
    func inboxFiles(_ inbox: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: inbox)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The partial files in the inbox for a file with this SHA-256 (named `<sha256>-<size>-<sender tag>`).
    func partials(_ inbox: String, sha256: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.partial")) ?? []
        return names.filter { $0.hasPrefix(sha256 + "-") }.map { inbox + "/.partial/" + $0 }.sorted()
    }

    /// The size of the first partial file for `sha256`, or 0 when there is none.
    func partialSize(_ inbox: String, sha256: String) -> Int {
        partials(inbox, sha256: sha256).first.flatMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int } ?? 0
    }

    /// The size of the partial data for `sha256` once it reaches `bytes`, or what it has after 60 s.
    func waitForPartial(_ inbox: String, sha256: String, atLeast bytes: Int) -> Int {
        let deadline = Date().addingTimeInterval(60)
        var size = 0
        while size < bytes && Date() < deadline {
            size = partialSize(inbox, sha256: sha256)
            usleep(20_000)
        }
        return size
    }
}
