import Foundation
import XCTest

/// SIGINT and SIGTERM while svc-publish's first unicast registration is still on its way: the
/// exchange is cancelled, what it may have written is withdrawn (or the tool says it could
/// not), and the tool exits with the signal's code, within a bound.
extension WideAreaTests {
    /// svc-publish on b against Scripts/hostile-dns drip on a (every answer held for minutes).
    private func publishAgainstADrippingServer(_ name: String) throws -> (server: ToolProcess, publisher: ToolProcess) {
        let server = try hostileDNS("drip")
        let key = try XCTUnwrap(try TestLAN.settings(of: "b", lan: lan)["TSIG_KEY"])
        let publisher = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--name", name, "--domain", "lab.test.", "--dns-server", "10.78.1.1", "--tsig-key", key])
        // The update has gone out and the server is dripping its answer.
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertNil(publisher.exitStatus(within: 0), publisher.transcript)
        return (server, publisher)
    }

    func testSIGTERMDuringTheFirstRegistrationCancelsItAndSaysWhatMayBeLeft() throws {
        let name = TestLAN.uniqueName("dripped")
        let (server, publisher) = try publishAgainstADrippingServer(name)
        defer { server.signal(SIGTERM); _ = server.waitForExit() }
        let signalled = Date()
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 15), 143, publisher.transcript)
        // The withdrawal's own exchange is bounded too (3 s per exchange, 5 s in all).
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 7, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains {
            $0.contains("stopped by SIGTERM before the registration of \"\(name)\" in lab.test. completed, and could not withdraw what it may have written")
                && $0.contains("\"\(name)\" may stay in the zone") && $0.contains("svc-publish --withdraw --name '\(name)' --domain lab.test. --dns-server 10.78.1.1 --tsig-key '")
        }, publisher.transcript)
    }

    func testASecondSIGINTGivesUpTheWithdrawalAtOnce() throws {
        let name = TestLAN.uniqueName("twice")
        let (server, publisher) = try publishAgainstADrippingServer(name)
        defer { server.signal(SIGTERM); _ = server.waitForExit() }
        let signalled = Date()
        publisher.signal(SIGINT)
        Thread.sleep(forTimeInterval: 0.5)
        publisher.signal(SIGINT)
        XCTAssertEqual(publisher.waitForExit(timeout: 15), 130, publisher.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(signalled), 2, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains {
            $0.contains("interrupted before the registration of \"\(name)\" in lab.test. completed, and could not withdraw") && $0.contains("on a second signal")
        }, publisher.transcript)
    }

    /// BIND applies the update, but its answer to the publisher is dropped (an nftables rule on
    /// the DNS host): the records are in the zone while svc-publish still waits. SIGINT then
    /// withdraws them.
    func testSIGINTAfterTheServerAppliedTheUpdateWithdrawsIt() throws {
        let name = TestLAN.uniqueName("applied")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let table = ["inet", "svcdrop"]
        XCTAssertEqual(try TestLAN.control(["exec-dns", "nft", "add", "table"] + table, lan: lan), 0)
        defer { _ = try? TestLAN.control(["exec-dns", "nft", "delete", "table"] + table, lan: lan) }
        XCTAssertEqual(try TestLAN.control(["exec-dns", "nft", "add", "chain"] + table + ["out", "{ type filter hook output priority 0 ; }"], lan: lan), 0)
        XCTAssertEqual(try TestLAN.control(["exec-dns", "nft", "add", "rule"] + table + ["out", "ip", "daddr", "10.78.1.1", "udp", "sport", "53", "drop"], lan: lan), 0)

        // --dns-timeout 30: the test has that long, not the default 3 s, to see the records and
        // signal while svc-publish still waits for the answer (3 s was too short at load 3).
        let publisher = try publish(name, ["--dns-timeout", "30"])
        // b still gets answers: the records are there although a was never told.
        let deadline = Date().addingTimeInterval(20)
        var srv: [String] = []
        while srv.isEmpty && Date() < deadline { srv = try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV") }
        XCTAssertEqual(srv.count, 1, publisher.transcript)
        XCTAssertNil(publisher.jsonEvents.first { $0["event"] as? String == "registered" }, publisher.transcript)
        XCTAssertEqual(try TestLAN.control(["exec-dns", "nft", "delete", "table"] + table, lan: lan), 0)

        publisher.signal(SIGINT)
        XCTAssertEqual(publisher.waitForExit(timeout: 15), 130, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains {
            $0.contains("interrupted before the registration of \"\(name)\" in lab.test. completed; withdrew what it may have written: nothing of it is left in the zone")
        }, publisher.transcript)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV"), [])
        XCTAssertFalse(try dig(from: "b", "_p2pipp._tcp.lab.test.", "PTR").contains("\(label)._p2pipp._tcp.lab.test."))
    }
}
