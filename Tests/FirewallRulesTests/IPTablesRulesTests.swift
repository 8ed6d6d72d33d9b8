import FirewallRules
import XCTest

/// iptables-save / ip6tables-save output, read and asked about mDNS and TCP ports.
final class IPTablesRulesTests: XCTestCase {
    func testPolicyDropWithMultiportUserChainAndReject() throws {
        let rules = try FirewallRuleset(iptablesSave: Fixtures.iptablesSave, source: .iptables)
        XCTAssertEqual(rules.check(IncomingPacket.mdns(.ipv4)).status, .allowed)
        for port: UInt16 in [22, 80, 8000, 8500, 9000, 7000] {
            XCTAssertEqual(rules.check(IncomingPacket.tcp(port: port, .ipv4)).status, .allowed, "port \(port)")
        }
        let closed = rules.check(IncomingPacket.tcp(port: 4242, .ipv4))
        XCTAssertEqual(closed.status, .blocked)
        XCTAssertEqual(closed.decidingRule, "iptables, chain INPUT: -A INPUT -p tcp -m tcp ! --dport 22 -j REJECT --reject-with tcp-reset")
        XCTAssertEqual(closed.fixes, ["iptables -I INPUT -p tcp --dport 4242 -j ACCEPT"])
        // Other UDP: past every rule (LOG does not end the walk) to the policy.
        let udp = rules.check(IncomingPacket(family: .ipv4, transport: .udp, destinationPort: 9))
        XCTAssertEqual(udp.status, .blocked)
        XCTAssertEqual(udp.decidingRule, "iptables, chain INPUT: policy drop")
        XCTAssertEqual(rules.openTCPPorts(), [7000, 8000])
    }

    func testIPv4AndIPv6Together() throws {
        let v4 = try FirewallRuleset(iptablesSave: Fixtures.iptablesSave, source: .iptables)
        let v6 = try FirewallRuleset(iptablesSave: Fixtures.ip6tablesSave, source: .ip6tables)
        XCTAssertTrue(FirewallRuleset.isNFTablesBackend(iptablesSave: Fixtures.iptablesSave))
        let both = v4.merging(v6)
        let mdns = both.check(.mdns)
        XCTAssertEqual(mdns.status, .blocked)
        XCTAssertEqual(mdns.decidingRule, "ip6tables, chain INPUT: -A INPUT -p udp -m udp --dport 5353 -j DROP")
        XCTAssertEqual(mdns.fixes, ["ip6tables -I INPUT -p udp --dport 5353 -j ACCEPT"])
        // TCP 4242: rejected over IPv4, let in over IPv6; the fix names the IPv4 tool only.
        let tcp = both.check(.tcp(port: 4242))
        XCTAssertEqual(tcp.status, .blocked)
        XCTAssertEqual(tcp.fixes, ["iptables -I INPUT -p tcp --dport 4242 -j ACCEPT"])
    }

    func testIPTablesNFTTablesAreReadOnceFromIPTablesSave() throws {
        // iptables-nft's table as nft shows it (dropping 5353), and as iptables-save shows it.
        let nft = try FirewallRuleset(nftablesJSON: #"{"nftables": [{"table": {"family": "ip", "name": "filter"}}, {"chain": {"family": "ip", "table": "filter", "name": "INPUT", "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}, {"rule": {"family": "ip", "table": "filter", "chain": "INPUT", "handle": 2, "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": 5353}}, {"counter": null}, {"drop": null}]}}]}"#)
        let save = try FirewallRuleset(iptablesSave: "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p udp -m udp --dport 5353 -j DROP\nCOMMIT\n", source: .iptables)
        let merged = nft.withoutNFTablesTables(managedBy: save).merging(save)
        XCTAssertEqual(merged.sources, [.iptables])
        XCTAssertEqual(merged.check(.mdns).fixes, ["iptables -I INPUT -p udp --dport 5353 -j ACCEPT"])
    }

    func testUnknownMatchesAndTargetsAreUncertain() throws {
        let rules = try FirewallRuleset(iptablesSave: """
            *filter
            :INPUT DROP [0:0]
            -A INPUT -s 192.168.1.0/24 -p tcp -m tcp --dport 4242 -j ACCEPT
            -A INPUT -p udp -m limit --limit 5/sec -j ACCEPT
            COMMIT
            *raw
            :PREROUTING ACCEPT [0:0]
            -A PREROUTING -j DROP
            COMMIT
            """, source: .iptables)
        let tcp = rules.check(IncomingPacket.tcp(port: 4242, .ipv4))
        XCTAssertEqual(tcp.status, .uncertain)
        XCTAssertEqual(tcp.decidingRule, "iptables, chain INPUT: policy drop")
        XCTAssertEqual(tcp.unclearRule, "iptables, chain INPUT: -A INPUT -s 192.168.1.0/24 -p tcp -m tcp --dport 4242 -j ACCEPT")
        XCTAssertEqual(rules.check(IncomingPacket.mdns(.ipv4)).status, .uncertain)
        XCTAssertEqual(rules.check(IncomingPacket.tcp(port: 80, .ipv4)).status, .blocked)

        let queued = try FirewallRuleset(iptablesSave: "*filter\n:INPUT ACCEPT [0:0]\n[3:180] -A INPUT -p udp -j NFQUEUE --queue-num 1\nCOMMIT\n", source: .iptables)
        let answer = queued.check(IncomingPacket.mdns(.ipv4))
        XCTAssertEqual(answer.status, .uncertain)
        XCTAssertEqual(answer.unclearRule, "iptables, chain INPUT: [3:180] -A INPUT -p udp -j NFQUEUE --queue-num 1")
    }

    func testInterfacesStatesAndRanges() throws {
        let rules = try FirewallRuleset(iptablesSave: """
            *filter
            :INPUT DROP [0:0]
            :IN - [0:0]
            -A INPUT -i lo -j ACCEPT
            -A INPUT -m state --state RELATED,ESTABLISHED -j ACCEPT
            -A INPUT -m conntrack --ctstate INVALID -j DROP
            -A INPUT -i eth+ -g IN
            -A INPUT -m pkttype --pkt-type multicast -p udp -j ACCEPT
            -A IN -p tcp -m tcp --dport 1024: -j ACCEPT
            -A IN -m comment --comment "a \\"quoted\\" comment" -p udp --dport 5353 -j ACCEPT
            COMMIT
            """, source: .iptables)
        XCTAssertEqual(rules.check(.tcp(port: 5000), inputInterface: "eth1").status, .allowed)
        XCTAssertEqual(rules.check(.tcp(port: 5000), inputInterface: "wlan0").status, .blocked)
        XCTAssertEqual(rules.check(.tcp(port: 5000)).status, .uncertain)
        // Via the goto over eth*, or via pkttype multicast on any interface.
        XCTAssertEqual(rules.check(.mdns).status, .allowed)
    }

    func testMalformedAndOversizedInput() throws {
        for text in ["", "garbage\n\u{0}\u{7F}", "*filter\n-A\n-A INPUT -p\n-A INPUT --dport\n-A INPUT -j\n! ! !\n:\n*\n", "*filter\n-A INPUT -p tcp --dport 99999 -j DROP\n"] {
            let rules = try FirewallRuleset(iptablesSave: text, source: .iptables)
            _ = rules.check(.mdns)
            _ = rules.check(.tcp(port: 1))
        }
        // A rule in INPUT with INPUT never declared: no base chain, so nothing is claimed.
        XCTAssertEqual(try FirewallRuleset(iptablesSave: "*filter\n-A INPUT -j DROP\n", source: .iptables).check(.mdns).status, .allowed)
        XCTAssertThrowsError(try FirewallRuleset(iptablesSave: String(repeating: "#", count: FirewallRuleset.maximumInputBytes + 1), source: .iptables))
        let many = "*filter\n:INPUT ACCEPT [0:0]\n" + String(repeating: "-A INPUT -j ACCEPT\n", count: FirewallRuleset.maximumRules + 1)
        XCTAssertThrowsError(try FirewallRuleset(iptablesSave: many, source: .iptables))
    }
}
