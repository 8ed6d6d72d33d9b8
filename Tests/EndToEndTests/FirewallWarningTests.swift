import Foundation
import XCTest

/// svc-publish reads the host's firewall at start (issue 12): a host whose namespace drops the
/// room's port (nftables) or mDNS (iptables) gets a warning naming the rule and the fix (and
/// the port that is open), and the drop is real (another host cannot join, or this one cannot
/// hear mDNS, until the rule goes). A clean host gets no warning. Each test removes its rules.
final class FirewallWarningTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// Runs a firewall command on a host and fails the test unless it succeeds.
    private func firewall(_ host: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let command = try TestLAN.command(on: host, arguments)
        XCTAssertEqual(command.waitForExit(timeout: 10), 0, command.transcript, file: file, line: line)
    }

    /// A host that lets in mDNS and one fixed TCP port, and drops the rest (policy drop).
    func testNFTablesDroppingThePortIsNamedWithItsFixAndTheOpenPortWorks() throws {
        let open = Int.random(in: 42000...42999)
        let table = ["inet", "svctest"]
        try firewall("a", ["nft", "add", "table"] + table)
        defer { _ = try? TestLAN.command(on: "a", ["nft", "delete", "table"] + table).waitForExit(timeout: 10) }
        try firewall("a", ["nft", "add", "chain"] + table + ["input", "{ type filter hook input priority 0; policy drop; }"])
        for rule in [["ct", "state", "established,related", "accept"], ["iifname", "lo", "accept"],
                     ["meta", "l4proto", "{ icmp, ipv6-icmp }", "accept"], ["udp", "dport", "5353", "accept"],
                     ["tcp", "dport", "\(open)", "accept"]] {
            try firewall("a", ["nft", "add", "rule"] + table + ["input"] + rule)
        }

        // On any free port: warned, with the rule, the fix and the port that is open.
        let name = TestLAN.uniqueName("fw")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        defer { publisher.signal(SIGTERM); _ = publisher.waitForExit() }
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int)
        let warning = try XCTUnwrap(waitForStderr(publisher, timeout: 5) { $0.contains("firewall") }, publisher.transcript)
        XCTAssertEqual(warning, "svc-publish: the firewall drops incoming TCP to port \(port) (rule: nftables table inet svctest, chain input: policy drop); "
                       + "to let it in: nft insert rule inet svctest input tcp dport \(port) accept; or publish on a port it lets in: --port \(open); "
                       + "members on other hosts cannot join until then")
        XCTAssertEqual(publisher.stderr.filter { $0.contains("firewall") }.count, 1, publisher.transcript)

        // The drop is real: a member on b finds the room but cannot connect.
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "3", "--message", "hi"])
        XCTAssertNotEqual(member.waitForExit(timeout: 15), 0, member.transcript)
        XCTAssertFalse(member.stdout.contains("hello from \(name)"), member.transcript)
        XCTAssertFalse(publisher.stdout.contains { $0.contains("\"joined\"") }, publisher.transcript)

        // The advice works: on --port <open>, no warning, and the member joins.
        let fixedName = TestLAN.uniqueName("fw-port")
        let fixed = try TestLAN.run("svc-publish", on: "a", ["--name", fixedName, "--port", "\(open)", "--json"])
        defer { fixed.signal(SIGTERM); _ = fixed.waitForExit() }
        XCTAssertNotNil(fixed.waitForEvent { $0["event"] as? String == "registered" }, fixed.transcript)
        let joining = try TestLAN.run("svc-connect", on: "b", [fixedName, "--timeout", "5", "--message", "hi"])
        XCTAssertEqual(joining.waitForExit(timeout: 15), 0, joining.transcript)
        XCTAssertNotNil(fixed.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "hi" }, fixed.transcript)
        XCTAssertFalse(fixed.stderr.contains { $0.contains("firewall") }, fixed.transcript)

        // And it was the rule: without it, the first room lets the member in too.
        try firewall("a", ["nft", "delete", "table"] + table)
        let again = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "5", "--message", "hi"])
        XCTAssertEqual(again.waitForExit(timeout: 15), 0, again.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "hi" }, publisher.transcript)
    }

    func testIPTablesDroppingMDNSIsNamedWithItsFixAndTheHostHearsNoAnswers() throws {
        for tool in ["iptables", "ip6tables"] {
            try firewall("c", [tool, "-A", "INPUT", "-p", "udp", "-m", "udp", "--dport", "5353", "-j", "DROP"])
        }
        defer {
            for tool in ["iptables", "ip6tables"] {
                _ = try? TestLAN.command(on: "c", [tool, "-D", "INPUT", "-p", "udp", "-m", "udp", "--dport", "5353", "-j", "DROP"]).waitForExit(timeout: 10)
            }
        }
        let publisher = try TestLAN.run("svc-publish", on: "c", ["--name", TestLAN.uniqueName("fw"), "--json"])
        defer { publisher.signal(SIGTERM); _ = publisher.waitForExit() }
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let warning = try XCTUnwrap(waitForStderr(publisher, timeout: 5) { $0.contains("mDNS") }, publisher.transcript)
        XCTAssertEqual(warning, "svc-publish: the firewall drops mDNS (UDP port 5353) (rule: iptables, chain INPUT: -A INPUT -p udp -m udp --dport 5353 -j DROP); "
                       + "to let it in: iptables -I INPUT -p udp --dport 5353 -j ACCEPT; ip6tables -I INPUT -p udp --dport 5353 -j ACCEPT; "
                       + "other hosts cannot find the room until then")
        XCTAssertFalse(publisher.stderr.contains { $0.contains("TCP") }, publisher.transcript)

        // The drop is real: c hears no answers, so a room published on b stays invisible to it.
        let other = TestLAN.uniqueName("fw-b")
        let room = try TestLAN.run("svc-publish", on: "b", ["--name", other, "--json"])
        defer { room.signal(SIGTERM); _ = room.waitForExit() }
        XCTAssertNotNil(room.waitForEvent { $0["event"] as? String == "registered" }, room.transcript)
        let browser = try TestLAN.run("svc-browse", on: "c", ["--json"])
        defer { browser.signal(SIGINT); _ = browser.waitForExit() }
        XCTAssertNil(browser.waitForEvent(timeout: 4) { $0["event"] as? String == "added" && $0["name"] as? String == other }, browser.transcript)
        // And it is the rule: without it, a new browser on c finds the room.
        for tool in ["iptables", "ip6tables"] {
            try firewall("c", [tool, "-D", "INPUT", "-p", "udp", "-m", "udp", "--dport", "5353", "-j", "DROP"])
        }
        let seeing = try TestLAN.run("svc-browse", on: "c", ["--json"])
        defer { seeing.signal(SIGINT); _ = seeing.waitForExit() }
        XCTAssertNotNil(seeing.waitForEvent(timeout: 10) { $0["event"] as? String == "added" && $0["name"] as? String == other }, seeing.transcript)
    }

    func testNoWarningOnAHostThatLetsEverythingIn() throws {
        let publisher = try TestLAN.run("svc-publish", on: "b", ["--name", TestLAN.uniqueName("fw"), "--json"])
        defer { publisher.signal(SIGTERM); _ = publisher.waitForExit() }
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        // The check takes tens of milliseconds; give it ample time to speak up.
        XCTAssertNil(waitForStderr(publisher, timeout: 2) { $0.contains("firewall") }, publisher.transcript)
    }
}
