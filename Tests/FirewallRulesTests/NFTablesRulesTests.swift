import FirewallRules
import XCTest

/// nft's JSON, as `nft -j list ruleset` prints it, read and asked about mDNS and TCP ports.
final class NFTablesRulesTests: XCTestCase {
    func testPolicyDropRulesetWithSetsRangesAndUserChain() throws {
        let rules = try FirewallRuleset(nftablesJSON: Fixtures.debianNFT)
        XCTAssertEqual(rules.sources, [.nftables])

        // Allowed by `udp dport 5353 ip6 daddr ff02::fb accept` in inet filter.
        XCTAssertEqual(rules.check(IncomingPacket.mdns(.ipv6)).status, .allowed)
        // Allowed by inet filter, then dropped by `udp dport 5353 drop` in the ip table t4.
        let mdns = rules.check(.mdns)
        XCTAssertEqual(mdns.status, .blocked)
        XCTAssertEqual(mdns.decidingRule, "nftables table ip t4, chain c: (handle 3) udp dport 5353 drop")
        XCTAssertEqual(mdns.fixes, ["nft insert rule ip t4 c udp dport 5353 accept"])

        for port: UInt16 in [22, 80, 443, 1024, 4242, 65535, 8000] {
            XCTAssertEqual(rules.check(.tcp(port: port)).status, .allowed, "port \(port)")
        }
        // Reached through the jump into user_in.
        XCTAssertEqual(rules.check(.tcp(port: 7000)).status, .allowed)
        // Below the range and in no set: the rule after the jump rejects it.
        let closed = rules.check(.tcp(port: 1000))
        XCTAssertEqual(closed.status, .blocked)
        XCTAssertEqual(closed.decidingRule, "nftables table inet filter, chain input: (handle 21) log counter reject")
        XCTAssertEqual(closed.fixes, ["nft insert rule inet filter input tcp dport 1000 accept"])
        XCTAssertEqual(closed.description,
                       "the firewall drops incoming TCP to port 1000 (rule: nftables table inet filter, chain input: (handle 21) log counter reject); "
                       + "to let it in: nft insert rule inet filter input tcp dport 1000 accept")
    }

    func testFirewalldZonesByInterfaceAndVerdictMap() throws {
        let rules = try FirewallRuleset(nftablesJSON: Fixtures.firewalldNFT)
        // The public zone allows mDNS and 4242; the home zone (eth0) allows more.
        XCTAssertEqual(rules.check(.mdns).status, .allowed)
        XCTAssertEqual(rules.check(.tcp(port: 4242)).status, .allowed)
        // 22: the public zone allows it, the home zone (on eth0) rejects it.
        let ssh = rules.check(.tcp(port: 22))
        XCTAssertEqual(ssh.status, .uncertain)
        XCTAssertNil(ssh.decidingRule)
        XCTAssertEqual(ssh.unclearRule, "nftables table inet firewalld, chain filter_IN_home: (handle 16) reject")
        XCTAssertEqual(rules.check(.tcp(port: 22), inputInterface: "wlan0").status, .allowed)
        XCTAssertEqual(rules.check(.tcp(port: 22), inputInterface: "eth0").status, .blocked)
        // 5000: rejected by the public zone, unless the packet comes in on eth0 (home zone).
        let unknownInterface = rules.check(.tcp(port: 5000))
        XCTAssertEqual(unknownInterface.status, .uncertain)
        XCTAssertEqual(unknownInterface.decidingRule, "nftables table inet firewalld, chain filter_IN_public: (handle 20) reject")
        XCTAssertEqual(unknownInterface.unclearRule, "nftables table inet firewalld, chain filter_IN_home: (handle 14) tcp dport 1025-65535 accept")
        XCTAssertEqual(unknownInterface.fixes, ["nft insert rule inet firewalld filter_INPUT tcp dport 5000 accept"])
        XCTAssertEqual(rules.check(.tcp(port: 5000), inputInterface: "eth0").status, .allowed)
        XCTAssertEqual(rules.check(.tcp(port: 5000), inputInterface: "wlan0").status, .blocked)
        // The only port of 1024 and up that every zone lets in.
        XCTAssertEqual(rules.openTCPPorts(), [4242])
    }

    func testNamedSetsAndVerdictMapsOnPorts() throws {
        let text = #"""
            {"nftables": [{"table": {"family": "ip6", "name": "f"}},
             {"set": {"family": "ip6", "table": "f", "name": "open", "type": "inet_service", "flags": ["interval"],
                      "elem": [{"elem": {"val": 8080, "comment": "web"}}, {"range": [9000, 9100]}]}},
             {"chain": {"family": "ip6", "table": "f", "name": "in", "type": "filter", "hook": "input", "prio": -5, "policy": "drop"}},
             {"rule": {"family": "ip6", "table": "f", "chain": "in", "handle": 4, "expr": [
               {"vmap": {"key": {"payload": {"protocol": "tcp", "field": "dport"}}, "data": {"set": [[22, {"accept": null}], [23, {"drop": null}]]}}}]}},
             {"rule": {"family": "ip6", "table": "f", "chain": "in", "handle": 5, "expr": [
               {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": "@open"}}, {"accept": null}]}}]}
            """#
        let rules = try FirewallRuleset(nftablesJSON: text)
        for port: UInt16 in [22, 8080, 9000, 9050, 9100] {
            XCTAssertEqual(rules.check(IncomingPacket.tcp(port: port, .ipv6)).status, .allowed, "port \(port)")
            // An ip6 table says nothing about IPv4.
            XCTAssertEqual(rules.check(IncomingPacket.tcp(port: port, .ipv4)).status, .allowed, "port \(port)")
        }
        let telnet = rules.check(.tcp(port: 23))
        XCTAssertEqual(telnet.status, .blocked)
        XCTAssertEqual(telnet.decidingRule, "nftables table ip6 f, chain in: (handle 4) tcp dport 23 : drop")
        XCTAssertEqual(telnet.fixes, ["nft insert rule ip6 f in tcp dport 23 accept"])
        XCTAssertEqual(rules.check(.tcp(port: 9101)).decidingRule, "nftables table ip6 f, chain in: policy drop")
        XCTAssertEqual(rules.openTCPPorts(limit: 5), [8080, 9000])
    }

    func testEmptyRulesetAllowsEverything() throws {
        let rules = try FirewallRuleset(nftablesJSON: #"{"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}]}"#)
        XCTAssertTrue(rules.isEmpty)
        let answer = rules.check(.mdns)
        XCTAssertEqual(answer.status, .allowed)
        XCTAssertNil(answer.decidingRule)
        XCTAssertEqual(answer.fixes, [])
        XCTAssertEqual(answer.description, "the firewall lets mDNS (UDP port 5353) in")
    }

    /// Matches it does not interpret never give a false "allowed", nor a false "blocked".
    func testUnknownMatchesMakeTheAnswerUncertain() throws {
        // A limit before a drop (policy accept): could drop.
        let limited = try FirewallRuleset(nftablesJSON: ruleset(policy: "accept", rules: [
            #"[{"limit": {"rate": 5, "per": "second"}}, {"drop": null}]"#,
        ]))
        let answer = limited.check(.mdns)
        XCTAssertEqual(answer.status, .uncertain)
        XCTAssertNil(answer.decidingRule)
        XCTAssertEqual(answer.unclearRule, "nftables table inet filter, chain input: (handle 1) limit drop")
        XCTAssertEqual(answer.fixes, ["nft insert rule inet filter input udp dport 5353 accept"])
        XCTAssertTrue(answer.description.hasPrefix("the firewall may drop mDNS (UDP port 5353): it could be dropped by "), answer.description)

        // An accept that depends on the source address, then policy drop: uncertain.
        let bySource = try FirewallRuleset(nftablesJSON: ruleset(policy: "drop", rules: [
            #"[{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.0.0.0", "len": 8}}}}, {"accept": null}]"#,
        ]))
        let tcp = bySource.check(.tcp(port: 4242, .ipv4))
        XCTAssertEqual(tcp.status, .uncertain)
        XCTAssertEqual(tcp.decidingRule, "nftables table inet filter, chain input: policy drop")
        XCTAssertEqual(tcp.unclearRule, "nftables table inet filter, chain input: (handle 1) ip saddr 10.0.0.0/8 accept")
        // Over IPv6 the IPv4 rule cannot match: certainly dropped.
        XCTAssertEqual(bySource.check(.tcp(port: 4242, .ipv6)).status, .blocked)

        // A rule with an expression it does not know and no verdict (xt): could drop.
        let xt = try FirewallRuleset(nftablesJSON: ruleset(policy: "accept", rules: [#"[{"xt": {"type": "target", "name": "TARPIT"}}]"#]))
        XCTAssertEqual(xt.check(.tcp(port: 1)).status, .uncertain)

        // A named set that is not in the ruleset: not understood.
        let missingSet = try FirewallRuleset(nftablesJSON: ruleset(policy: "accept", rules: [
            #"[{"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": "@nowhere"}}, {"drop": null}]"#,
        ]))
        XCTAssertEqual(missingSet.check(.mdns).status, .uncertain)
        XCTAssertEqual(missingSet.check(.tcp(port: 5353)).status, .allowed, "a udp match never holds for TCP")
    }

    func testNegationsAndMulticastDestinations() throws {
        let rules = try FirewallRuleset(nftablesJSON: ruleset(policy: "drop", rules: [
            #"[{"match": {"op": "!=", "left": {"meta": {"key": "iifname"}}, "right": "lo"}}, {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": {"prefix": {"addr": "224.0.0.0", "len": 4}}}}, {"accept": null}]"#,
            #"[{"match": {"op": "==", "left": {"meta": {"key": "pkttype"}}, "right": "multicast"}}, {"accept": null}]"#,
        ]))
        XCTAssertEqual(rules.check(IncomingPacket.mdns(.ipv4)).status, .allowed)
        XCTAssertEqual(rules.check(IncomingPacket.mdns(.ipv6)).status, .allowed, "pkttype multicast")
        // A TCP packet to this host is not multicast: both rules do not hold.
        XCTAssertEqual(rules.check(.tcp(port: 80)).status, .blocked)
    }

    func testJumpLoopsAndExplosiveJumpsEndUncertainNotHung() throws {
        let loop = try FirewallRuleset(nftablesJSON: ruleset(policy: "accept", rules: [#"[{"jump": {"target": "input"}}]"#]))
        let answer = loop.check(.mdns)
        XCTAssertEqual(answer.status, .uncertain)
        XCTAssertTrue(answer.unclearRule?.contains("jumps nest deeper than 16") == true, "\(answer)")

        // 16 chains, each jumping three times into the next: 3^16 walks without the budget.
        var objects = [#"{"table": {"family": "inet", "name": "t"}}"#,
                       #"{"chain": {"family": "inet", "table": "t", "name": "c0", "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}"#]
        for index in 1...16 { objects.append(#"{"chain": {"family": "inet", "table": "t", "name": "c\#(index)"}}"#) }
        for index in 0..<16 {
            for _ in 0..<3 { objects.append(#"{"rule": {"family": "inet", "table": "t", "chain": "c\#(index)", "expr": [{"jump": {"target": "c\#(index + 1)"}}]}}"#) }
        }
        let explosive = try FirewallRuleset(nftablesJSON: #"{"nftables": ["# + objects.joined(separator: ",") + "]}")
        let start = ContinuousClock.now
        XCTAssertEqual(explosive.check(IncomingPacket.mdns(.ipv4)).status, .uncertain)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
    }

    func testMalformedAndOversizedInputIsRefused() {
        let bad = ["", "{", "[", "nonsense", #"{"nftables": 5}"#, #"{"nftables": [}"#, #"{"a": "\u12"}"#, #"{"a": "\q"}"#,
                   "{\"a\": \"\u{01}\"}", #"{"nftables": []} trailing"#, String(repeating: "[", count: 100_000)]
        for text in bad {
            XCTAssertThrowsError(try FirewallRuleset(nftablesJSON: text), String(text.prefix(40)))
        }
        let huge = #"{"nftables": [""# + String(repeating: "x", count: FirewallRuleset.maximumInputBytes) + #""]}"#
        XCTAssertThrowsError(try FirewallRuleset(nftablesJSON: huge)) { error in
            XCTAssertTrue((error as? FirewallParseError)?.message.contains("larger than 8 MiB") == true, "\(error)")
        }
        // Well-formed JSON of the wrong shape is skipped, not trapped on.
        let odd = #"{"nftables": [1, "x", {"chain": 3}, {"rule": {"family": "inet", "table": "t", "chain": "nowhere", "expr": [1, {"match": 2}]}}, {"table": {}}]}"#
        XCTAssertEqual(try FirewallRuleset(nftablesJSON: odd).check(.mdns).status, .allowed)
    }

    /// One inet filter table with an input base chain of this policy and these rules (each an
    /// nft JSON expression list); rule handles count from 1.
    private func ruleset(policy: String, rules: [String]) -> String {
        var objects = [#"{"table": {"family": "inet", "name": "filter", "handle": 1}}"#,
                       #"{"chain": {"family": "inet", "table": "filter", "name": "input", "handle": 1, "type": "filter", "hook": "input", "prio": 0, "policy": "\#(policy)"}}"#]
        for (index, rule) in rules.enumerated() {
            objects.append(#"{"rule": {"family": "inet", "table": "filter", "chain": "input", "handle": \#(index + 1), "expr": \#(rule)}}"#)
        }
        return #"{"nftables": ["# + objects.joined(separator: ", ") + "]}"
    }
}
