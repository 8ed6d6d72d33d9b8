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
