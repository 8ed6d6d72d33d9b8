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

    /// The partial files in the inbox for a file offered by `named` (its SHA-256, or the resume
    /// tag of a streamed offer: `<named>-<size>-<sender tag>`).
    func partials(_ inbox: String, named: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.partial")) ?? []
        return names.filter { $0.hasPrefix(named + "-") }.map { inbox + "/.partial/" + $0 }.sorted()
    }

    /// The size of the first partial file for `named`, or 0 when there is none.
    func partialSize(_ inbox: String, named: String) -> Int {
        partials(inbox, named: named).first.flatMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int } ?? 0
    }

    /// The resume tag svc-connect offers the file at `path` by between peers that stream files
    /// (docs/PROTOCOL.md, "Files"): the SHA-256 of "svc resume tag 2" and the file's device,
    /// inode, size, modification time and change time (seconds, nanoseconds), each a big-endian
    /// 64-bit number.
    func resumeTag(of path: String) throws -> String {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        var input = Array("svc resume tag 2".utf8)
        for value in [UInt64(info.st_dev), UInt64(info.st_ino), UInt64(info.st_size),
                      UInt64(bitPattern: Int64(info.st_mtim.tv_sec)), UInt64(bitPattern: Int64(info.st_mtim.tv_nsec)),
                      UInt64(bitPattern: Int64(info.st_ctim.tv_sec)), UInt64(bitPattern: Int64(info.st_ctim.tv_nsec))] {
            withUnsafeBytes(of: value.bigEndian) { input.append(contentsOf: $0) }
        }
        let file = NSTemporaryDirectory() + "svc-tag-\(UUID().uuidString)"
        try Data(input).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try sha256(of: file)
    }

    /// The size of the partial data for `named` once it reaches `bytes`, or what it has after 60 s.
    func waitForPartial(_ inbox: String, named: String, atLeast bytes: Int) -> Int {
        let deadline = Date().addingTimeInterval(60)
        var size = 0
        while size < bytes && Date() < deadline {
            size = partialSize(inbox, named: named)
            usleep(20_000)
        }
        return size
    }
}
