import Foundation
import XCTest

/// The firewall check on the doctor's LAN: host b gets an nftables table of its own (inside its
/// network namespace) that drops mDNS, or lets in only one fixed TCP port; the doctor names the
/// rule and the fix, in text and in JSON, and the drop is real. The table goes in a `defer`.
extension DoctorTests {
    static let firewallTable = ["inet", "svcdoc"]

    /// Adds the table with an input chain of `policy` and `rules`; fails the test unless nft
    /// accepts each.
    func stageFirewall(policy: String, rules: [[String]], file: StaticString = #filePath, line: UInt = #line) throws {
        let table = Self.firewallTable
        let commands = [["nft", "add", "table"] + table,
                        ["nft", "add", "chain"] + table + ["input", "{ type filter hook input priority 0; policy \(policy); }"]]
            + rules.map { ["nft", "add", "rule"] + table + ["input"] + $0 }
        for arguments in commands {
            let command = try TestLAN.command(on: "b", lan: lan, arguments)
            XCTAssertEqual(command.waitForExit(timeout: 10), 0, command.transcript, file: file, line: line)
        }
    }

    func removeFirewall() {
        _ = try? TestLAN.command(on: "b", lan: lan, ["nft", "delete", "table"] + Self.firewallTable).waitForExit(timeout: 10)
    }

    func observed(_ report: Report, _ check: String) -> [String] { report.check(check)["observed"] as? [String] ?? [] }

    func testAFirewallDroppingMDNSIsAProblemWithItsRuleAndFix() throws {
        try stageFirewall(policy: "accept", rules: [["udp", "dport", "5353", "drop"]])
        defer { removeFirewall() }

        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "firewall"), "problem", report.transcript)
        XCTAssertEqual(report.summary(of: "firewall"), "the firewall drops mDNS: other hosts cannot find services here, nor this host theirs",
                       report.transcript)
        let rule = try XCTUnwrap(observed(report, "firewall").first { $0.hasPrefix("mDNS (UDP port 5353 from 224.0.0.251, ff02::fb): dropped by ") },
                                 report.transcript)
        XCTAssertTrue(rule.hasPrefix("mDNS (UDP port 5353 from 224.0.0.251, ff02::fb): dropped by nftables table inet svcdoc, chain input: (handle "), rule)
        XCTAssertTrue(rule.hasSuffix(") udp dport 5353 drop"), rule)
        XCTAssertTrue(observed(report, "firewall").contains { $0.hasPrefix("incoming TCP to ephemeral ports ") && $0.hasSuffix(": let in") }, report.transcript)
        XCTAssertEqual(report.fixes(of: "firewall"), ["nft insert rule inet svcdoc input udp dport 5353 accept"])

        // The text report says the same.
        let text = try TestLAN.run("svc-doctor", on: "b", lan: lan, ["--timeout", "4"])
        XCTAssertEqual(text.waitForExit(timeout: 30), 1, text.transcript)
        XCTAssertTrue(text.stdout.contains("problem  firewall (mDNS and incoming TCP): the firewall drops mDNS: other hosts cannot find services here, nor this host theirs"),
                      text.transcript)
        XCTAssertTrue(text.stdout.contains("         saw: " + rule), text.transcript)
        XCTAssertTrue(text.stdout.contains("         fix: nft insert rule inet svcdoc input udp dport 5353 accept"), text.transcript)

        // The drop is real: b hears no answers, so a room published on a stays invisible to it.
        let name = TestLAN.uniqueName("doc-fw")
        let room = try TestLAN.run("svc-publish", on: "a", lan: lan, ["--name", name, "--json"])
        defer { room.signal(SIGTERM); _ = room.waitForExit() }
        XCTAssertNotNil(room.waitForEvent { $0["event"] as? String == "registered" }, room.transcript)
        let blind = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--json"])
        defer { blind.signal(SIGINT); _ = blind.waitForExit() }
        XCTAssertNil(blind.waitForEvent(timeout: 4) { $0["event"] as? String == "added" && $0["name"] as? String == name }, blind.transcript)
        // And it was the rule: without it, a new browser on b finds the room.
        removeFirewall()
        let seeing = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--json"])
        defer { seeing.signal(SIGINT); _ = seeing.waitForExit() }
        XCTAssertNotNil(seeing.waitForEvent(timeout: 10) { $0["event"] as? String == "added" && $0["name"] as? String == name }, seeing.transcript)
    }

    func testAFirewallLettingInOnlyAFixedPortRecommendsPublishingOnIt() throws {
        let open = Int.random(in: 42000...42999)
        try stageFirewall(policy: "drop", rules: [["ct", "state", "established,related", "accept"], ["iifname", "lo", "accept"],
                                                  ["meta", "l4proto", "{ icmp, ipv6-icmp }", "accept"], ["udp", "dport", "5353", "accept"],
                                                  ["tcp", "dport", "\(open)", "accept"]])
        defer { removeFirewall() }

        // What a publisher without --port meets: its ephemeral port is dropped; publish on the open one.
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "firewall"), "problem", report.transcript)
        XCTAssertEqual(report.summary(of: "firewall"),
                       "the firewall drops incoming TCP to ephemeral ports 32768-60999 (svc-publish without --port): members on other hosts cannot join",
                       report.transcript)
        XCTAssertTrue(observed(report, "firewall").contains(
            "incoming TCP to ephemeral ports 32768-60999 (svc-publish without --port): dropped by nftables table inet svcdoc, chain input: policy drop"),
                      report.transcript)
        XCTAssertTrue(observed(report, "firewall").contains("mDNS (UDP port 5353 from 224.0.0.251, ff02::fb): let in"), report.transcript)
        XCTAssertTrue(observed(report, "firewall").contains("TCP ports it lets in: \(open)"), report.transcript)
        XCTAssertEqual(report.fixes(of: "firewall"), ["svc-publish --port \(open)   (the firewall lets only fixed ports in; this is one)"])

        // --port: a closed port gets the rule that lets it in; the open one is ok.
        let closed = try diagnose("b", ["--port", "4242"])
        XCTAssertEqual(closed.status(of: "firewall"), "problem", closed.transcript)
        XCTAssertEqual(closed.fixes(of: "firewall"), ["nft insert rule inet svcdoc input tcp dport 4242 accept",
                                                      "svc-publish --port \(open)   (or publish on a port the firewall lets in)"])
        let fixed = try diagnose("b", ["--port", "\(open)"])
        XCTAssertEqual(fixed.status(of: "firewall"), "ok", fixed.transcript)
        XCTAssertEqual(fixed.summary(of: "firewall"), "the firewall lets mDNS and incoming TCP to port \(open) in", fixed.transcript)

        // The drop is real: a member on a cannot join a room on an ephemeral port of b ...
        let name = TestLAN.uniqueName("doc-fw")
        let room = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--name", name, "--json"])
        defer { room.signal(SIGTERM); _ = room.waitForExit() }
        XCTAssertNotNil(room.waitForEvent { $0["event"] as? String == "registered" }, room.transcript)
        let member = try TestLAN.run("svc-connect", on: "a", lan: lan, [name, "--timeout", "3", "--message", "hi"])
        XCTAssertNotEqual(member.waitForExit(timeout: 15), 0, member.transcript)
        XCTAssertFalse(room.stdout.contains { $0.contains("\"joined\"") }, room.transcript)
        // ... and the doctor's fix works: on --port <open>, it joins.
        let fixedName = TestLAN.uniqueName("doc-fw-port")
        let fixedRoom = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--name", fixedName, "--port", "\(open)", "--json"])
        defer { fixedRoom.signal(SIGTERM); _ = fixedRoom.waitForExit() }
        XCTAssertNotNil(fixedRoom.waitForEvent { $0["event"] as? String == "registered" }, fixedRoom.transcript)
        let joining = try TestLAN.run("svc-connect", on: "a", lan: lan, [fixedName, "--timeout", "5", "--message", "hi"])
        XCTAssertEqual(joining.waitForExit(timeout: 15), 0, joining.transcript)
        XCTAssertNotNil(fixedRoom.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "hi" }, fixedRoom.transcript)
    }
}
