import Foundation
import XCTest

/// svc-doctor on the doctor's own LAN (`TestLAN.doctor`): host a stays healthy; each test
/// (here and in DoctorTests+Firewall.swift) breaks host b one way, checks that the doctor names the problem and its fix, and repairs
/// the host in a `defer`, also when the test fails.
final class DoctorTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    let lan = TestLAN.doctor

    /// What `svc-doctor --json` reported: its exit status and one object per check.
    struct Report {
        let status: Int32?
        let checks: [[String: Any]]
        let summary: [String: Any]?
        let transcript: String

        func check(_ name: String) -> [String: Any] { checks.first { $0["check"] as? String == name } ?? [:] }
        func status(of name: String) -> String? { check(name)["status"] as? String }
        func fixes(of name: String) -> [String] { check(name)["fixes"] as? [String] ?? [] }
        func summary(of name: String) -> String { check(name)["summary"] as? String ?? "" }
    }

    func diagnose(_ host: String, _ arguments: [String] = []) throws -> Report {
        let doctor = try TestLAN.run("svc-doctor", on: host, lan: lan, ["--json", "--timeout", "4"] + arguments)
        let status = doctor.waitForExit(timeout: 30)
        let events = doctor.jsonEvents
        return Report(status: status, checks: events.filter { $0["event"] as? String == "check" },
                      summary: events.first { $0["event"] as? String == "summary" }, transcript: doctor.transcript)
    }

    func lanControl(_ arguments: [String]) throws {
        XCTAssertEqual(try TestLAN.control(arguments, lan: lan), 0, "Scripts/lan --lan \(lan) \(arguments.joined(separator: " "))")
    }

    /// Brings host b back to health: its bus, its daemon, its name and its interface.
    func repairHostB() throws {
        try lanControl(["up", "2"]) // starts a stopped bus or daemon, leaves running ones alone
        let iface = try TestLAN.settings(of: "b", lan: lan)["IFACE"] ?? "veth0"
        XCTAssertEqual(try TestLAN.command(on: "b", lan: lan, ["ip", "link", "set", iface, "multicast", "on"]).waitForExit(), 0)
    }

    func testAHealthyHostReportsNoProblem() throws {
        let report = try diagnose("a")
        XCTAssertEqual(report.status, 0, report.transcript)
        XCTAssertEqual(report.checks.compactMap { $0["check"] as? String },
                       ["bus", "avahi-daemon", "responders", "interfaces", "firewall", "nss-mdns", "self-test"], report.transcript)
        for check in report.checks {
            XCTAssertNotEqual(check["status"] as? String, "problem", report.transcript)
        }
        XCTAssertEqual(report.status(of: "self-test"), "ok", report.transcript)
        XCTAssertEqual(report.status(of: "avahi-daemon"), "ok", report.transcript)
        XCTAssertEqual(report.summary(of: "avahi-daemon"), "avahi 0.8 runs as \(lan)-a.local", report.transcript)
        XCTAssertEqual(report.summary(of: "interfaces"), "Avahi uses veth0", report.transcript)
        // Its namespace has no firewall tables: read (as root) and nothing in the way.
        XCTAssertEqual(report.status(of: "firewall"), "ok", report.transcript)
        XCTAssertTrue(report.summary(of: "firewall").hasPrefix("no firewall rules: mDNS and incoming TCP to ephemeral ports "), report.transcript)
        XCTAssertEqual(report.summary?["problems"] as? Int, 0)
        XCTAssertEqual(report.summary?["exit_code"] as? Int, 0)
    }

    func testInterfaceLimitsTheInterfaceCheckAndTheSelfTestToOneInterface() throws {
        let lanSide = try diagnose("a", ["--interface", "veth0"])
        XCTAssertEqual(lanSide.status, 0, lanSide.transcript)
        XCTAssertEqual(lanSide.summary(of: "interfaces"), "Avahi uses veth0", lanSide.transcript)
        XCTAssertEqual(lanSide.status(of: "self-test"), "ok", lanSide.transcript)
        // The loopback interface: Avahi announces nothing there, so neither check can pass.
        let loopback = try diagnose("a", ["--interface", "lo"])
        XCTAssertEqual(loopback.status, 1, loopback.transcript)
        XCTAssertEqual(loopback.status(of: "interfaces"), "problem", loopback.transcript)
        XCTAssertEqual(loopback.status(of: "self-test"), "problem", loopback.transcript)
    }

    func testAStoppedDaemonIsAProblem() throws {
        try lanControl(["daemon", "stop", "b"])
        defer { XCTAssertNoThrow(try repairHostB()) }
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "bus"), "ok", report.transcript)
        XCTAssertEqual(report.status(of: "avahi-daemon"), "problem", report.transcript)
        XCTAssertEqual(report.summary(of: "avahi-daemon"), "avahi-daemon is not running")
        XCTAssertEqual(report.fixes(of: "avahi-daemon"), ["sudo systemctl start avahi-daemon"])
        XCTAssertEqual(report.status(of: "self-test"), "problem")
        XCTAssertTrue(report.summary(of: "self-test").contains("failed at publish"), report.transcript)
        XCTAssertEqual(report.summary?["exit_code"] as? Int, 1)
    }

    func testAMissingBusIsAProblem() throws {
        try lanControl(["bus", "stop", "b"])
        defer { XCTAssertNoThrow(try repairHostB()) }
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "bus"), "problem", report.transcript)
        XCTAssertEqual(report.fixes(of: "bus").first, "sudo systemctl start dbus")
        XCTAssertTrue((report.check("bus")["observed"] as? [String] ?? []).contains("connect: No such file or directory"), report.transcript)
        XCTAssertEqual(report.status(of: "avahi-daemon"), "problem")
        XCTAssertEqual(report.fixes(of: "avahi-daemon"), ["start D-Bus first (see the bus check)", "sudo systemctl start avahi-daemon"])
    }

    func testAnInterfaceWithoutMulticastIsAProblem() throws {
        let iface = try XCTUnwrap(TestLAN.settings(of: "b", lan: lan)["IFACE"])
        XCTAssertEqual(try TestLAN.command(on: "b", lan: lan, ["ip", "link", "set", iface, "multicast", "off"]).waitForExit(), 0)
        defer { XCTAssertNoThrow(try repairHostB()) }
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "interfaces"), "problem", report.transcript)
        XCTAssertEqual(report.fixes(of: "interfaces"), ["sudo ip link set \(iface) multicast on"])
        XCTAssertTrue((report.check("interfaces")["observed"] as? [String] ?? []).contains { $0.hasPrefix("\(iface): LAN, up, no multicast") },
                      report.transcript)
        XCTAssertEqual(report.status(of: "self-test"), "problem", "nothing is found without multicast: \(report.transcript)")
    }

    func testASecondResponderOnPort5353IsReported() throws {
        let responder = try TestLAN.command(on: "b", lan: lan, ["python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("", 5353))
            print("bound", flush=True)
            sys.stdin.read()
            """])
        defer {
            responder.signal(SIGTERM)
            _ = responder.waitForExit()
        }
        XCTAssertNotNil(responder.waitForLine { $0 == "bound" }, responder.transcript)
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 0, "another program on 5353 is a warning: \(report.transcript)")
        XCTAssertEqual(report.status(of: "responders"), "warning", report.transcript)
        let pid = responder.process.processIdentifier
        XCTAssertEqual(report.summary(of: "responders"), "python3 (pid \(pid)) also holds UDP port 5353: replies meant for Avahi may reach it",
                       report.transcript)
        XCTAssertTrue(report.fixes(of: "responders").first?.hasPrefix("stop or reconfigure pid \(pid): ") ?? false, report.transcript)
    }

    func testAHostNameConflictIsReported() throws {
        let taken = try XCTUnwrap(TestLAN.settings(of: "a", lan: lan)["AVAHI_HOST_NAME"])
        try lanControl(["hostname", "b", taken])
        defer { XCTAssertNoThrow(try lanControl(["hostname", "b"])) }
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 0, "a renamed host still works: \(report.transcript)")
        XCTAssertEqual(report.status(of: "avahi-daemon"), "warning", report.transcript)
        XCTAssertEqual(report.summary(of: "avahi-daemon"),
                       "another machine on the network is called \(taken).local, so Avahi renamed this one \(taken)-2.local", report.transcript)
        XCTAssertTrue(report.fixes(of: "avahi-daemon").first?.hasPrefix("give one of the two machines another name") ?? false)
        XCTAssertEqual(report.status(of: "self-test"), "ok", report.transcript)
    }

    func testUsageErrorsExit64() throws {
        let doctor = try TestLAN.run("svc-doctor", on: "a", lan: lan, ["--timeout", "0"])
        XCTAssertEqual(doctor.waitForExit(), 64, doctor.transcript)
        XCTAssertTrue(doctor.stderr.first?.hasPrefix("Error: --timeout takes a number of seconds") ?? false, doctor.transcript)
    }
}
