import Foundation
import XCTest

/// avahi-daemon there but not answering (stopped by SIGSTOP: hung, overloaded): D-Bus makes a
/// call to it wait 25 s, and svc-browse --once --timeout 3 had taken 50 s, saying "not running";
/// svc-connect "no service named ..." after 6 s.
extension DaemonTests {
    /// The daemon of `host` as Scripts/lan runs it: its PID file is in the host's state
    /// directory, beside its bus socket.
    func daemonPID(of host: String) throws -> pid_t {
        let bus = try XCTUnwrap(try TestLAN.settings(of: host)["BUS"])
        let socket = URL(fileURLWithPath: String(bus.dropFirst("unix:path=".count)))
        let text = try String(contentsOf: socket.deletingLastPathComponent().appendingPathComponent("avahi.pid"), encoding: .utf8)
        let pid = try XCTUnwrap(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), text)
        let command = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
        XCTAssertTrue(command.hasPrefix("avahi-daemon"), command)
        return pid
    }

    func testAHungDaemonEndsBrowseAndConnectAtTheirBoundSayingItDidNotAnswer() throws {
        let name = TestLAN.uniqueName("hung")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(publisher), name, publisher.transcript)
        let pid = try daemonPID(of: "b")
        XCTAssertEqual(kill(pid, SIGSTOP), 0)
        var stopped = true
        defer { if stopped { kill(pid, SIGCONT) } }

        // Bounds far below D-Bus's 25 s per call: each tool ends at its own 2 s.
        let browse = try TestLAN.run("svc-browse", on: "b", ["--once", "--timeout", "2"])
        XCTAssertEqual(browse.waitForExit(timeout: 12), 69, browse.transcript)
        let browseError = browse.stderr.joined(separator: "\n")
        XCTAssertTrue(browseError.contains("avahi-daemon did not answer over the D-Bus system bus at "), browse.transcript)
        XCTAssertTrue(browseError.contains("within 2 s, so browsing for _p2pipp._tcp in local. failed"), browse.transcript)
        XCTAssertTrue(browseError.contains("avahi-browse -a -t") && browseError.contains("service avahi-daemon restart"), browse.transcript)
        XCTAssertFalse(browseError.contains("not running") || browseError.contains("stopped waiting for the first batch"), browse.transcript)
        XCTAssertTrue(browse.stdout.isEmpty, browse.transcript)

        let connect = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "2", "--message", "hi"])
        XCTAssertEqual(connect.waitForExit(timeout: 12), 69, connect.transcript)
        let connectError = connect.stderr.joined(separator: "\n")
        XCTAssertTrue(connectError.contains("avahi-daemon did not answer over the D-Bus system bus at "), connect.transcript)
        XCTAssertTrue(connectError.contains("within 2 s, so resolving \"\(name)\""), connect.transcript)
        XCTAssertFalse(connectError.contains("no service named") || connectError.contains("services seen") || connectError.contains("not running"),
                       connect.transcript)

        XCTAssertEqual(kill(pid, SIGCONT), 0)
        stopped = false
        // The daemon works again: the same browse and connection succeed.
        let resumed = Date()
        var seen: [String] = []
        while !seen.contains(name) && Date().timeIntervalSince(resumed) < 10 {
            seen = try listing(on: "b")
        }
        XCTAssertTrue(seen.contains(name), "\(seen)")
        let again = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "5", "--message", "hi"])
        XCTAssertEqual(again.waitForExit(timeout: 20), 0, again.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }
}
