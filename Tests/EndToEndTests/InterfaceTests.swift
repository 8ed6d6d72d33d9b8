import Foundation
import XCTest

/// `--interface NAME` on svc-publish and svc-connect (svc-browse's is in BrowseAllTests).
final class InterfaceTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func testAnUnknownInterfaceIsAUsageErrorListingTheInterfaces() throws {
        for arguments in [["svc-browse", "--all"], ["svc-publish"], ["svc-connect", "Room"]] {
            let tool = try TestLAN.run(arguments[0], on: "b", Array(arguments.dropFirst()) + ["--interface", "nosuch0"])
            XCTAssertEqual(tool.waitForExit(), 64, tool.transcript)
            XCTAssertEqual(tool.stderr.first, "Error: no network interface is named 'nosuch0'; this host has: lo, veth0", tool.transcript)
            XCTAssertTrue(tool.stdout.isEmpty, tool.transcript)
        }
    }

    func testPublishAndConnectOnOneInterface() throws {
        let hidden = TestLAN.uniqueName("lo only")
        let loopback = try TestLAN.run("svc-publish", on: "a", ["--name", hidden, "--interface", "lo", "--json"])
        let registered = try XCTUnwrap(loopback.waitForEvent { $0["event"] as? String == "registered" }, loopback.transcript)
        XCTAssertEqual(registered["interface"] as? String, "lo")

        let name = TestLAN.uniqueName("veth only")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--interface", "veth0"])
        XCTAssertNotNil(publisher.waitForLine { $0.contains("registered \"\(name)\" _p2pipp._tcp local. on veth0 port ") }, publisher.transcript)

        let browser = try TestLAN.run("svc-browse", on: "b", ["--json"])
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }, browser.transcript)
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "complete" }, browser.transcript)
        XCTAssertNil(browser.jsonEvents.first { $0["name"] as? String == hidden }, "announced on lo only, it must not reach b\n\(browser.transcript)")

        let wrong = try TestLAN.run("svc-connect", on: "b", [name, "--interface", "lo", "--message", "hi", "--no-reconnect", "--timeout", "2"])
        XCTAssertEqual(wrong.waitForExit(timeout: 15), 68, wrong.transcript)
        XCTAssertTrue(wrong.stderr.contains { $0.contains("no _p2pipp._tcp services are visible in local. on lo") }, wrong.transcript)

        let client = try TestLAN.run("svc-connect", on: "b", [name, "--interface", "veth0", "--message", "hi", "--no-reconnect", "--json"])
        XCTAssertEqual(client.waitForExit(timeout: 15), 0, client.transcript)
        let connected = try XCTUnwrap(client.jsonEvents.first { $0["event"] as? String == "connected" }, client.transcript)
        let addresses = try XCTUnwrap(connected["addresses"] as? [String])
        XCTAssertTrue(addresses.allSatisfy { !$0.contains("%") || $0.hasSuffix("%veth0") }, "\(addresses)")
        XCTAssertNotNil(publisher.waitForLine { $0.contains("hi") }, publisher.transcript)

        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        for room in [publisher, loopback] {
            room.signal(SIGTERM)
            XCTAssertEqual(room.waitForExit(), 0, room.transcript)
        }
    }

    /// A host on veth0 announces a room whose host record gives an address this machine
    /// reaches over another interface (here one of a's own, on a second interface `other0`;
    /// any network behind it, a VPN say, is the same). svc-connect --interface veth0 must not
    /// connect there: the socket is bound to veth0, so that address does not answer.
    func testAnAddressReachedOverAnotherInterfaceIsNotConnectedTo() throws {
        let namespace = try XCTUnwrap(TestLAN.settings(of: "a")["NETNS"])
        func ip(_ arguments: [String]) throws -> Int32? {
            try ToolProcess("/usr/sbin/ip", ["-n", namespace] + arguments, label: "ip").waitForExit()
        }
        _ = try ip(["link", "del", "other0"])   // left over from an interrupted run
        XCTAssertEqual(try ip(["link", "add", "other0", "type", "veth", "peer", "name", "other1"]), 0)
        addTeardownBlock { _ = try? ip(["link", "del", "other0"]) }
        XCTAssertEqual(try ip(["addr", "add", "10.99.0.1/24", "dev", "other0"]), 0)
        XCTAssertEqual(try ip(["link", "set", "other1", "up"]), 0)
        XCTAssertEqual(try ip(["link", "set", "other0", "up"]), 0)

        // A room on a that lets anyone in, listening on every address, 10.99.0.1 too.
        let name = TestLAN.uniqueName("real room")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--allow-plaintext"])
        let registered = try XCTUnwrap(publisher.waitForLine { $0.contains("registered \"\(name)\"") }, publisher.transcript)
        let port = try XCTUnwrap(registered.components(separatedBy: " port ").last?.prefix { $0.isNumber }, registered)

        // c's trap: a room on veth0 whose host's A record is 10.99.0.1.
        let host = "trap-\(UInt16.random(in: 1000...9999)).local"
        let trapName = TestLAN.uniqueName("trap room")
        let address = try TestLAN.command(on: "c", ["avahi-publish", "-a", "-R", host, "10.99.0.1"])
        let service = try TestLAN.command(on: "c", ["avahi-publish", "-s", "-H", host, trapName, "_p2pipp._tcp", String(port)])
        defer {
            for process in [address, service] { process.signal(SIGTERM); _ = process.waitForExit() }
        }
        XCTAssertNotNil(service.waitForLine { $0.contains("Established") } ?? service.stderr.first { $0.contains("Established") }, service.transcript)

        let trapped = try TestLAN.run("svc-connect", on: "a", [trapName, "--interface", "veth0", "--allow-plaintext", "--message", "trapped",
                                                               "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(trapped.waitForExit(timeout: 20), 75, trapped.transcript)
        XCTAssertTrue(trapped.stderr.contains { $0.contains("is published, but its host does not answer") && $0.contains("10.99.0.1") },
                      trapped.transcript)
        XCTAssertNil(publisher.waitForLine(timeout: 1) { $0.contains("trapped") }, "reached over other0\n\(publisher.transcript)")

        // The room's own address on veth0 still answers, through veth0.
        let client = try TestLAN.run("svc-connect", on: "a", [name, "--interface", "veth0", "--message", "through veth0", "--no-reconnect"])
        XCTAssertEqual(client.waitForExit(timeout: 15), 0, client.transcript)
        XCTAssertNotNil(publisher.waitForLine { $0.contains("through veth0") }, publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }
}
