import Foundation
import XCTest

/// svc-browse and svc-connect --domain against a zone server that misbehaves on purpose
/// (Scripts/hostile-dns on host a of the two-subnet LAN, port 53 of 10.78.1.1).
extension WideAreaTests {
    func hostileDNS(_ mode: String) throws -> ToolProcess {
        let server = try TestLAN.command(on: "a", lan: lan, ["/usr/bin/python3", TestLAN.script("hostile-dns"), "--lifetime", "60", "10.78.1.1", mode])
        XCTAssertNotNil(server.waitForLine(timeout: 10) { $0.hasPrefix("{\"listening\"") }, server.transcript)
        return server
    }

    /// A server that forces TCP and drips one byte every 2 s: --timeout bounds the whole
    /// connect (ldns's timeout applied to each read, holding it for minutes), and SIGINT
    /// ends a browse that waits on it at once.
    func testADrippingServerHoldsNeitherConnectPastItsTimeoutNorBrowsePastCtrlC() throws {
        let server = try hostileDNS("drip")
        defer { server.signal(SIGTERM); _ = server.waitForExit() }

        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.1", "slow room",
                                                                         "--timeout", "5", "--message", "x", "--no-reconnect"])
        XCTAssertEqual(client.waitForExit(timeout: 30), 75, client.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 9, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("did not answer") }, client.transcript)

        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.1"])
        Thread.sleep(forTimeInterval: 2)
        let interrupted = Date()
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(timeout: 20), 0, browser.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(interrupted), 2, browser.transcript)
    }

    /// Datagrams from another port, with a wrong id or with another question are ignored;
    /// the true answer that follows them is the one listed.
    func testForgedDatagramsBeforeTheTrueAnswerAreIgnored() throws {
        let server = try hostileDNS("forged")
        defer { server.signal(SIGTERM); _ = server.waitForExit() }

        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.1", "--once"])
        XCTAssertEqual(browser.waitForExit(timeout: 20), 0, browser.transcript)
        XCTAssertTrue(browser.stdout.contains { $0.hasPrefix("added \"real room\"") }, browser.transcript)
        XCTAssertFalse(browser.stdout.contains { $0.contains("forged") }, browser.transcript)
    }
}

/// Ownership is proved by the room's key, not the host name.
extension WideAreaTests {
    /// Another key on the same host (as a twin machine of the same host name would be) neither
    /// takes back nor withdraws a crashed room's records; the room's own key does.
    func testALeftoverOfAnotherKeyIsNeitherTakenBackNorWithdrawn() throws {
        let name = TestLAN.uniqueName("twin")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("twin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let otherKey = ["--identity", directory.appendingPathComponent("other.pem").path]

        let crashed = try publish(name)
        XCTAssertNotNil(crashed.waitForEvent { $0["event"] as? String == "registered" }, crashed.transcript)
        crashed.signal(SIGKILL)
        _ = crashed.waitForExit(timeout: 10)

        let twin = try publish(name, otherKey)
        let registered = try XCTUnwrap(twin.waitForEvent { $0["event"] as? String == "registered" }, twin.transcript)
        XCTAssertEqual(registered["name"] as? String, "\(name) (2)", "a leftover with another key is not ours: renamed")
        XCTAssertEqual(try dig(from: "b", "\(label)\\032(2)._p2pipp._tcp.lab.test.", "SRV").count, 1)
        twin.signal(SIGTERM)
        XCTAssertEqual(twin.waitForExit(timeout: 10), 0, twin.transcript)

        let withdraw = try publish(name, otherKey + ["--withdraw"])
        XCTAssertEqual(withdraw.waitForExit(timeout: 20), 73, withdraw.transcript)
        XCTAssertTrue(withdraw.stderr.contains { $0.contains("was registered with another key than this user's") }, withdraw.transcript)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").count, 1, "another key's records stay")

        let own = try publish(name, ["--withdraw"])
        XCTAssertEqual(own.waitForExit(timeout: 20), 0, own.transcript)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV"), [])
    }

    /// Address records do not pile up: registering replaces the host name's addresses, and the
    /// last room of the host takes them with it.
    func testStaleAddressesAreReplacedAndTheLastRoomRemovesThem() throws {
        let name = TestLAN.uniqueName("stale")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let first = try publish(name)
        XCTAssertNotNil(first.waitForEvent { $0["event"] as? String == "registered" }, first.transcript)
        let host = String(try XCTUnwrap(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").first?.split(separator: " ").last))
        first.signal(SIGKILL)
        _ = first.waitForExit(timeout: 10)
        // Addresses a past lease left (added behind the publisher's back).
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let add = try TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
        add.send("server 10.78.1.53\nzone lab.test.\n" + (1...40).map { "update add \(host) 30 A 10.0.9.\($0)\n" }.joined() + "send\n")
        add.closeStdin()
        XCTAssertEqual(add.waitForExit(timeout: 20), 0, add.transcript)
        XCTAssertEqual(try dig(from: "b", host, "A").count, 41)

        let successor = try publish(name)
        XCTAssertNotNil(successor.waitForEvent { $0["event"] as? String == "registered" }, successor.transcript)
        XCTAssertEqual(try dig(from: "b", host, "A"), ["10.78.1.1"])
        successor.signal(SIGTERM)
        XCTAssertEqual(successor.waitForExit(timeout: 10), 0, successor.transcript)
        XCTAssertEqual(try dig(from: "b", host, "A"), [], "the host's last room removes its addresses")
    }
}
