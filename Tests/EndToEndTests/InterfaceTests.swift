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
}
