import FirewallRules
import HostDiagnosis
import XCTest

/// The firewall check from rulesets in memory: what it decides, what it shows and the fixes.
final class FirewallCheckTests: XCTestCase {
    /// iptables with policy drop that lets in mDNS (unless `dropMDNS`) and TCP `open`.
    func ruleset(dropMDNS: Bool = false, open: [UInt16] = []) throws -> FirewallRuleset {
        var lines = ["*filter", ":INPUT DROP [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]",
                     "-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", "-A INPUT -i lo -j ACCEPT"]
        lines.append(dropMDNS ? "-A INPUT -p udp -m udp --dport 5353 -j DROP" : "-A INPUT -p udp -m udp --dport 5353 -j ACCEPT")
        lines += open.map { "-A INPUT -p tcp -m tcp --dport \($0) -j ACCEPT" }
        lines.append("COMMIT")
        let text = lines.joined(separator: "\n") + "\n"
        return try FirewallRuleset(iptablesSave: text, source: .iptables)
            .merging(try FirewallRuleset(iptablesSave: text, source: .ip6tables))
    }

    func facts(_ ruleset: FirewallRuleset, port: UInt16? = nil, range: ClosedRange<UInt16>? = 32768...60999) -> FirewallFacts {
        FirewallFacts(ruleset: ruleset, sources: ["iptables-save", "ip6tables-save"], unreadable: [], port: port, ephemeralPorts: range, isRoot: true)
    }

    func testNoRulesIsOK() {
        let finding = Finding.firewall(facts(FirewallRuleset()))
        XCTAssertEqual(finding.check, "firewall")
        XCTAssertEqual(finding.status, .ok)
        XCTAssertEqual(finding.summary, "no firewall rules: mDNS and incoming TCP to ephemeral ports 32768-60999 (svc-publish without --port) are let in")
        XCTAssertEqual(finding.observed, ["read: iptables-save, ip6tables-save", "no rules: everything is let in"])
        XCTAssertEqual(finding.fixes, [])
    }

    func testDroppedMDNSIsAProblemWithTheRuleAndTheFix() throws {
        let finding = Finding.firewall(facts(try ruleset(dropMDNS: true), port: 4242, range: nil))
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.summary, "the firewall drops mDNS: other hosts cannot find services here, nor this host theirs; "
                       + "and it drops incoming TCP to port 4242: members on other hosts cannot join")
        XCTAssertTrue(finding.observed.contains("mDNS (UDP port 5353 from 224.0.0.251, ff02::fb): dropped by iptables, chain INPUT: -A INPUT -p udp -m udp --dport 5353 -j DROP"),
                      "\(finding.observed)")
        XCTAssertTrue(finding.observed.contains("incoming TCP to port 4242: dropped by iptables, chain INPUT: policy drop"), "\(finding.observed)")
        XCTAssertEqual(finding.fixes, ["iptables -I INPUT -p udp --dport 5353 -j ACCEPT", "ip6tables -I INPUT -p udp --dport 5353 -j ACCEPT",
                                       "iptables -I INPUT -p tcp --dport 4242 -j ACCEPT", "ip6tables -I INPUT -p tcp --dport 4242 -j ACCEPT"])
        XCTAssertFalse(finding.observed.contains { $0.hasPrefix("ip_local_port_range") }, "--port given: the range does not matter")
    }

    func testOnlyFixedPortsOpenRecommendsPublishingOnOne() throws {
        let finding = Finding.firewall(facts(try ruleset(open: [22, 8000, 42100])))
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.summary, "the firewall drops incoming TCP to ephemeral ports 32768-60999 (svc-publish without --port): members on other hosts cannot join")
        XCTAssertTrue(finding.observed.contains("mDNS (UDP port 5353 from 224.0.0.251, ff02::fb): let in"), "\(finding.observed)")
        XCTAssertTrue(finding.observed.contains("TCP ports it lets in: 8000, 42100"), "\(finding.observed)")
        XCTAssertEqual(finding.fixes, ["svc-publish --port 8000   (the firewall lets only fixed ports in; this is one)"])

        // --port with a closed port: the rule that lets it in, and an open port instead.
        let closed = Finding.firewall(facts(try ruleset(open: [8000]), port: 4242))
        XCTAssertEqual(closed.fixes, ["iptables -I INPUT -p tcp --dport 4242 -j ACCEPT", "ip6tables -I INPUT -p tcp --dport 4242 -j ACCEPT",
                                      "svc-publish --port 8000   (or publish on a port the firewall lets in)"])
        // --port with an open port: ok.
        let open = Finding.firewall(facts(try ruleset(open: [8000]), port: 8000))
        XCTAssertEqual(open.status, .ok)
        XCTAssertEqual(open.summary, "the firewall lets mDNS and incoming TCP to port 8000 in")
    }

    func testNoOpenPortOpensOneBelowTheEphemeralRange() throws {
        let finding = Finding.firewall(facts(try ruleset(), range: 40000...50000))
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.fixes, ["iptables -I INPUT -p tcp --dport 39999 -j ACCEPT", "ip6tables -I INPUT -p tcp --dport 39999 -j ACCEPT",
                                       "svc-publish --port 39999"])
    }

    func testAPartlyOpenEphemeralRangeIsStillAProblem() throws {
        // The lowest ephemeral port is let in, the middle and highest are not.
        let finding = Finding.firewall(facts(try ruleset(open: [32768])))
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.fixes, ["svc-publish --port 32768   (the firewall lets only fixed ports in; this is one)"])
    }

    func testAnUnreadableFirewallIsAWarning() {
        let notRoot = Finding.firewall(FirewallFacts(ruleset: FirewallRuleset(), sources: [], unreadable: ["nft -j list ruleset: Operation not permitted (run as root)"],
                                                     port: nil, ephemeralPorts: nil, isRoot: false))
        XCTAssertEqual(notRoot.status, .warning)
        XCTAssertEqual(notRoot.summary, "the firewall could not be read (it needs root)")
        XCTAssertEqual(notRoot.observed, ["not read: nft -j list ruleset: Operation not permitted (run as root)"])
        XCTAssertEqual(notRoot.fixes, ["sudo svc-doctor   (reading the firewall needs root)"])
        let noTools = Finding.firewall(FirewallFacts(ruleset: FirewallRuleset(), sources: [], unreadable: [], port: nil, ephemeralPorts: nil, isRoot: true))
        XCTAssertEqual(noTools.status, .warning)
        XCTAssertEqual(noTools.fixes, ["sudo apt-get install nftables   (lets svc-doctor read the rules)"])
    }

    func testAnUninterpretedRuleIsAWarning() throws {
        let text = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p udp -j NFQUEUE --queue-num 1\nCOMMIT\n"
        let finding = Finding.firewall(facts(try FirewallRuleset(iptablesSave: text, source: .iptables), port: 4242))
        XCTAssertEqual(finding.status, .warning, "\(finding)")
        XCTAssertTrue(finding.summary.hasPrefix("the firewall may drop mDNS"), finding.summary)
        XCTAssertFalse(finding.fixes.isEmpty)
    }

    func testEphemeralPortRangeParsing() {
        XCTAssertEqual(FirewallFacts.ephemeralPorts(parsing: "32768\t60999\n"), 32768...60999)
        XCTAssertEqual(FirewallFacts.ephemeralPorts(parsing: "1024 1024"), 1024...1024)
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: "60999\t32768\n"))
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: "0 100"))
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: "32768"))
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: "32768 70000"))
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: "1 2 3"))
        XCTAssertNil(FirewallFacts.ephemeralPorts(parsing: ""))
    }
}
