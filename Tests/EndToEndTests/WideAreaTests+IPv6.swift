import Foundation
import XCTest

/// IPv6 across the router: the two-subnet LAN routes a ULA prefix per subnet, svc-publish
/// registers its routable IPv6 address as an AAAA record, and a member on the other subnet
/// connects over it.
extension WideAreaTests {
    /// Runs nft in the router's namespace (its own firewall, nothing else's).
    private func routerFirewall(_ arguments: [String]) throws -> Int32? {
        let nft = try ToolProcess("/usr/sbin/ip", ["netns", "exec", "svc-\(lan)-rt", "nft"] + arguments)
        return nft.waitForExit(timeout: 10)
    }

    func testAMemberOnTheOtherSubnetConnectsOverIPv6WhenIPv4IsBlocked() throws {
        XCTAssertEqual(try TestLAN.settings(of: "a", lan: lan)["IPV6_ROUTED"], "fd78:1::1")
        XCTAssertEqual(try TestLAN.settings(of: "b", lan: lan)["IPV6_ROUTED"], "fd78:2::2")
        let name = TestLAN.uniqueName("six")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let publisher = try publish(name)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int)
        let host = String(try XCTUnwrap(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").first?.split(separator: " ").last))
        XCTAssertEqual(try dig(from: "b", host, "AAAA"), ["fd78:1::1"], "the routable IPv6 address is registered; link-local is not")

        // The router forwards no TCP to a's IPv4 address: only the AAAA leads to the room.
        let table = ["inet", "svcsix"]
        XCTAssertEqual(try routerFirewall(["add", "table"] + table), 0)
        defer { _ = try? routerFirewall(["delete", "table"] + table) }
        XCTAssertEqual(try routerFirewall(["add", "chain"] + table + ["relay", "{ type filter hook forward priority 0 ; }"]), 0)
        XCTAssertEqual(try routerFirewall(["add", "rule"] + table + ["relay", "ip", "daddr", "10.78.1.1", "meta", "l4proto", "tcp", "drop"]), 0)

        let member = try TestLAN.run("svc-connect", on: "b", lan: lan, ["--domain", "lab.test.", name, "--as", "sixer", "--message", "over IPv6",
                                                                         "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(member.waitForExit(timeout: 30), 0, member.transcript)
        XCTAssertTrue(member.stderr.contains { $0.contains("connected to \"\(name)\" at [fd78:1::1]:\(port)") }, member.transcript)
        let text = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "over IPv6" }, publisher.transcript)
        XCTAssertEqual(text["from"] as? String, "sixer")
        XCTAssertTrue(publisher.stdout.contains { $0.contains("fd78:2::2") }, "the member came from b's routed IPv6 address: " + publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
        XCTAssertEqual(try dig(from: "b", host, "AAAA"), [], "withdrawn with the room")
    }
}
