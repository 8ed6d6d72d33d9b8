import Foundation
import XCTest

/// The scripts share a machine: Scripts/lan exec finds the built tools, `up` on a healthy LAN
/// leaves what runs alone, an impaired cable can be pulled and plugged back, and two demos
/// with different LAN names run at once.
final class ScriptTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    var root: String { URL(fileURLWithPath: TestLAN.lanScript!).deletingLastPathComponent().deletingLastPathComponent().path }

    func testExecPutsTheBuiltToolsOnPath() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["SVC_BIN_DIR"] = nil // as a user types it: the checkout's own build
        let lookup = try ToolProcess(TestLAN.lanScript!, ["--lan", TestLAN.main, "exec", "a", "/bin/sh", "-c", "command -v svc-publish"],
                                     label: "command -v", environment: environment)
        XCTAssertEqual(lookup.waitForExit(), 0, lookup.transcript)
        XCTAssertTrue(lookup.stdout.first?.hasPrefix(root + "/.build/") ?? false, lookup.transcript)

        let version = try ToolProcess(TestLAN.lanScript!, ["--lan", TestLAN.main, "exec", "a", "svc-publish", "--version"], label: "svc-publish --version")
        XCTAssertEqual(version.waitForExit(), 0, version.transcript)
        XCTAssertFalse(version.stdout.isEmpty, version.transcript)
    }

    func testUpOnAHealthyLANLeavesWhatRunsOnItAlone() throws {
        let name = TestLAN.uniqueName("stays")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let before = try status()
        XCTAssertEqual(try TestLAN.control(["up", "3"]), 0)
        XCTAssertEqual(try status(), before, "the daemons are the same processes")
        XCTAssertTrue(publisher.process.isRunning, publisher.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--message", "still here"])
        XCTAssertEqual(client.waitForExit(timeout: 20), 0, client.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }

    func testAnImpairedCableCanBePulledAndPluggedBack() throws {
        let name = TestLAN.uniqueName("cable")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        XCTAssertEqual(try TestLAN.control(["impair", "b", "0", "20", "0"]), 0)
        var impaired = true
        defer { if impaired { _ = try? TestLAN.control(["impair", "b", "off"]) } }
        XCTAssertEqual(try TestLAN.control(["link", "down", "b"]), 0)
        var plugged = false
        defer { if !plugged { _ = try? TestLAN.control(["link", "up", "b"]) } }
        let cut = try TestLAN.run("svc-connect", on: "b", [name, "--message", "lost", "--timeout", "2"])
        XCTAssertNotEqual(cut.waitForExit(timeout: 20), 0, "nothing crosses a pulled cable: " + cut.transcript)
        XCTAssertEqual(try TestLAN.control(["link", "up", "b"]), 0)
        plugged = true

        let client = try TestLAN.run("svc-connect", on: "b", [name, "--message", "through the cable again", "--timeout", "10"])
        XCTAssertEqual(client.waitForExit(timeout: 30), 0, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == "through the cable again" }, publisher.transcript)
        let off = try ToolProcess(TestLAN.lanScript!, ["--lan", TestLAN.main, "impair", "b", "off"], label: "impair off")
        XCTAssertEqual(off.waitForExit(timeout: 30), 0, off.transcript)
        impaired = false
        let stats = try XCTUnwrap(off.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first, off.transcript)
        XCTAssertGreaterThan((stats["from_host"] as? [String: Any])?["frames"] as? Int ?? 0, 0, "the impairment still carried b's frames: \(stats)")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }

    func testTwoDemosWithDifferentLANNamesRunAtOnce() throws {
        let demos = try ["d1", "d2"].map { suffix in
            var environment = ProcessInfo.processInfo.environment
            environment["SVC_DEMO_LAN"] = TestLAN.main + suffix
            return try ToolProcess(TestLAN.script("demo"), [], label: "demo " + suffix, environment: environment)
        }
        for demo in demos {
            XCTAssertEqual(demo.waitForExit(timeout: 180), 0, demo.transcript)
        }
    }

    /// `Scripts/lan status`: the hosts with their daemons' PIDs.
    func status() throws -> [String] {
        let status = try ToolProcess(TestLAN.lanScript!, ["--lan", TestLAN.main, "status"], label: "lan status")
        XCTAssertEqual(status.waitForExit(), 0, status.transcript)
        return status.stdout
    }
}
