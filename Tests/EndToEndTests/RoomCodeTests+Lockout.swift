import Foundation
import XCTest

/// Issue 13 review: one machine with 120 IPv6 link-local aliases, a new key per guess and bursts
/// timed from the refusals kept every new member out of a code room (22 tries of 22 refused in
/// 150 s). Its aliases are now one host (the hardware address the room's neighbour table has for
/// them), so it gets 5 tries a minute and cannot spend the room's 20.
extension RoomCodeLANTests {
    func testOneMachineBurstingFromManyLinkLocalAliasesKeepsNoNewMemberOut() throws {
        let name = TestLAN.uniqueName("aliased")
        let (publisher, _, code) = try publishWithCode(name)
        defer { stop(publisher) }
        let port = try XCTUnwrap(publisher.jsonEvents.first { $0["event"] as? String == "registered" }?["port"] as? Int)
        let room = try TestLAN.addresses(of: "a").ipv6
        let interface = try XCTUnwrap(TestLAN.settings(of: "c")["IFACE"])
        let aliases = (1...120).map { "fe80::bad:\(String($0, radix: 16))" }
        let add = try TestLAN.command(on: "c", ["sh", "-c", "for a in \(aliases.joined(separator: " ")); do ip -6 addr add $a/64 dev \(interface) nodad || exit 1; done"])
        XCTAssertEqual(add.waitForExit(timeout: 30), 0, add.transcript)
        defer {
            _ = try? TestLAN.command(on: "c", ["sh", "-c", "for a in \(aliases.joined(separator: " ")); do ip -6 addr del $a/64 dev \(interface); done"])
                .waitForExit(timeout: 30)
        }
        let attacker = try TestLAN.command(on: "c", ["/usr/bin/python3", TestLAN.script("code-burst"), "\(room)%\(interface)", String(port),
                                                     "--bind", aliases.map { "\($0)%\(interface)" }.joined(separator: ","),
                                                     "--per-burst", "30", "--keys", "30", "--seconds", "50"])
        defer { stop(attacker) }
        let first = try XCTUnwrap(attacker.waitForEvent(timeout: 60) { $0["burst"] != nil }, attacker.transcript)
        XCTAssertLessThanOrEqual(first["answered"] as? Int ?? 99, 5, "120 aliases are one host: 5 tries a minute. " + attacker.transcript)

        // The bound: every new member on host b (a new key each, over IPv6 link-local like the
        // attacker) gets in at its first try while the attack goes on, one every 5 s.
        for index in 1...6 {
            let member = try message(name, as: "newcomer\(index)", ["--room-code", code])
            XCTAssertEqual(member.status, 0, "new member \(index) during the attack: " + member.transcript)
            Thread.sleep(forTimeInterval: 5)
        }
        XCTAssertNotNil(attacker.waitForExit(timeout: 60), attacker.transcript)
        let totals = try XCTUnwrap(attacker.jsonEvents.last, attacker.transcript)
        XCTAssertLessThanOrEqual(totals["answered"] as? Int ?? 99, 5, "within its minute the machine had 5 guesses: " + attacker.transcript)
        XCTAssertGreaterThanOrEqual(totals["refused"] as? Int ?? 0, 25, "the rest of its first burst was refused: " + attacker.transcript)
    }

    /// Review attacks14v N2: an IPv4 socket carries no interface, so 169.254 peers were counted
    /// per address and one machine with 40 aliases spent the room's 20 tries. The interface now
    /// comes from the room's address the peer reached, so the aliases are one machine (its own
    /// 5) plus, at most, the interface's bucket for entries that changed (5).
    func testOneMachineWithManyIPv4LinkLocalAliasesIsOneHost() throws {
        let name = TestLAN.uniqueName("aliased4")
        let (publisher, _, _) = try publishWithCode(name)
        defer { stop(publisher) }
        let port = try XCTUnwrap(publisher.jsonEvents.first { $0["event"] as? String == "registered" }?["port"] as? Int)
        let roomInterface = try XCTUnwrap(TestLAN.settings(of: "a")["IFACE"])
        let interface = try XCTUnwrap(TestLAN.settings(of: "c")["IFACE"])
        let aliases = (1...40).map { "169.254.3.\($0)" }
        let room = try TestLAN.command(on: "a", ["ip", "addr", "add", "169.254.0.1/16", "dev", roomInterface])
        XCTAssertEqual(room.waitForExit(timeout: 30), 0, room.transcript)
        defer { _ = try? TestLAN.command(on: "a", ["ip", "addr", "del", "169.254.0.1/16", "dev", roomInterface]).waitForExit(timeout: 30) }
        let add = try TestLAN.command(on: "c", ["sh", "-c", "for a in \(aliases.joined(separator: " ")); do ip addr add $a/16 dev \(interface) || exit 1; done"])
        XCTAssertEqual(add.waitForExit(timeout: 30), 0, add.transcript)
        defer {
            _ = try? TestLAN.command(on: "c", ["sh", "-c", "for a in \(aliases.joined(separator: " ")); do ip addr del $a/16 dev \(interface); done"])
                .waitForExit(timeout: 30)
        }
        let attacker = try TestLAN.command(on: "c", ["/usr/bin/python3", TestLAN.script("code-burst"), "169.254.0.1", String(port),
                                                     "--bind", aliases.joined(separator: ","), "--per-burst", "30", "--keys", "30", "--seconds", "1"])
        defer { stop(attacker) }
        let burst = try XCTUnwrap(attacker.waitForEvent(timeout: 60) { $0["burst"] != nil }, attacker.transcript)
        XCTAssertLessThanOrEqual(burst["answered"] as? Int ?? 99, 10, "40 aliases are one machine, not 30 hosts: " + attacker.transcript)
        XCTAssertGreaterThanOrEqual(burst["refused"] as? Int ?? 0, 20, attacker.transcript)
    }
}
