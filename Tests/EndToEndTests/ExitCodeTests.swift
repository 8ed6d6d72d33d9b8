import Foundation
import XCTest

/// The exit-code table: the same in the README and in every tool's `--help`, and true. Each
/// code is checked here or next to the behaviour it belongs to: 64 (CommandLineTests), 68
/// (PublishBrowseConnectTests), 69 (DaemonTests), 73 (DaemonTests), 74 (HostileServerTests,
/// RoomTests, FileTransferTests), 75 and 76 (RoomTests), 78 (ForgetTests: known_peers), 130
/// (InterruptTests; svc-publish's, and 143, in WideAreaTests+Interrupt), 79 and 80 (RoomCodeLANTests). 77 is the TLS handshake's: PeerTrustTests check which
/// refusals give it.
final class ExitCodeTableTests: XCTestCase {
    /// The lines from "EXIT STATUS" up to the first empty line or the end.
    func table(in lines: [String]) -> [String] {
        guard let start = lines.firstIndex(where: { $0.hasPrefix("EXIT STATUS") }) else { return [] }
        return Array(lines[start...].prefix { !$0.isEmpty && $0 != "```" })
    }

    func testTheReadmeAndEveryToolsHelpShowTheSameTable() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readmeTable = table(in: try String(contentsOf: readme, encoding: .utf8).components(separatedBy: "\n"))
        XCTAssertGreaterThan(readmeTable.count, 10, "the README has the table")
        let codes = readmeTable.compactMap { line -> Int? in
            let fields = line.split(separator: " ")
            return line.hasPrefix("  ") && !line.hasPrefix("   ") ? fields.first.flatMap { Int($0) } : nil
        }
        XCTAssertEqual(codes, [0, 64, 66, 68, 69, 70, 71, 73, 74, 75, 76, 77, 78, 79, 80, 130, 143], "one line per code, each once")
        for tool in ["svc-publish", "svc-browse", "svc-connect"] {
            let help = try ToolProcess(TestLAN.tool(tool), ["--help"])
            XCTAssertEqual(help.waitForExit(), 0)
            XCTAssertEqual(table(in: help.stdout), readmeTable, tool)
        }
    }
}

/// Exit codes that need the virtual LAN and are not checked elsewhere.
final class ExitCodeLANTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func publish(_ name: String, _ extra: [String] = []) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"] + extra)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func testAFileThatCannotBeSentIsReportedBeforeConnecting() throws {
        let directory = NSTemporaryDirectory() + "svc-noinput-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        XCTAssertEqual(mkfifo(directory + "/fifo", 0o600), 0)
        // No service of that name exists: the file is checked first, so this is 66, not 68.
        let cases = [
            (directory + "/missing.txt", "No such file or directory"),
            (directory, "it is a directory"),
            (directory + "/fifo", "not a regular file"),
        ]
        for (path, reason) in cases {
            let started = Date()
            let client = try TestLAN.run("svc-connect", on: "b", ["nobody publishes this", "--send", path, "--timeout", "5"])
            XCTAssertEqual(client.waitForExit(), 66, client.transcript)
            XCTAssertLessThan(Date().timeIntervalSince(started), 4, "nothing was looked up")
            XCTAssertEqual(client.stderr, ["svc-connect: error: cannot send \(path): \(reason); nothing was sent"], client.transcript)
        }
    }

    func testCannotListenIs71() throws {
        let first = try publish(TestLAN.uniqueName("port owner"), ["--port", "4243"])
        let second = try TestLAN.run("svc-publish", on: "a", ["--name", TestLAN.uniqueName("port taker"), "--port", "4243"])
        XCTAssertEqual(second.waitForExit(), 71, second.transcript)
        XCTAssertTrue(second.stderr.contains { $0.contains("cannot listen on TCP port 4243") }, second.transcript)
        first.signal(SIGTERM)
        XCTAssertEqual(first.waitForExit(), 0)
    }

    func testTyposInARoomAreReportedAndDoNotChangeTheExitStatus() throws {
        let name = TestLAN.uniqueName("typos")
        let publisher = try publish(name)
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "clumsy", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" }, member.transcript)
        member.send("/send /nonexistent/nosuchfile")
        member.send("/dance")
        member.send("/help")
        member.send("still talking")
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == "still talking" }, publisher.transcript)
        member.closeStdin()
        XCTAssertEqual(member.waitForExit(), 0, member.transcript)
        let stderr = member.stderr.joined(separator: "\n")
        XCTAssertTrue(stderr.contains("svc-connect: cannot send /nonexistent/nosuchfile: No such file or directory; nothing was sent"), stderr)
        XCTAssertTrue(stderr.contains("unknown command /dance"), stderr)
        XCTAssertTrue(stderr.contains("/quit or Ctrl-D") && stderr.contains("Ctrl-C"), "/help says how to leave: " + stderr)
        XCTAssertFalse(stderr.contains("error"), stderr)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
