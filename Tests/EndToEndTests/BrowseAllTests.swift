import Foundation
import XCTest

/// `svc-browse --all` against services of other DNS-SD stacks: avahi-publish on host a,
/// python-zeroconf (Scripts/zeroconf-publish, bound to host c's interface) on host c.
final class BrowseAllTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// Services of types no other test uses, each visible on the LAN once this returns.
    struct Foreign {
        let avahi: ToolProcess
        let zeroconf: ToolProcess
        let suffix: UInt32
        var avahiType: String { "_av\(suffix)._tcp" }
        var avahiName: String { "Avahi \(suffix)" }
        var zeroconfType: String { "_zc\(suffix)._tcp" }
        var zeroconfName: String { "Zeroconf \(suffix)" }
    }

    func publishForeign() throws -> Foreign {
        let suffix = UInt32.random(in: 1000...9999)
        let hostC = try TestLAN.addresses(of: "c")
        let avahi = try TestLAN.command(on: "a", ["avahi-publish", "-s", "Avahi \(suffix)", "_av\(suffix)._tcp", "4242", "from=avahi"])
        let zeroconf = try TestLAN.command(on: "c", [TestLAN.script("zeroconf-publish"), "Zeroconf \(suffix)", "_zc\(suffix)._tcp", "5000", hostC.ipv4])
        // avahi-publish says so on stderr once probing is over; the script once announced.
        XCTAssertNotNil(waitForStderr(avahi) { $0.hasPrefix("Established under name") }, avahi.transcript)
        XCTAssertNotNil(zeroconf.waitForLine(timeout: 15) { $0 == "registered Zeroconf \(suffix)" }, zeroconf.transcript)
        return Foreign(avahi: avahi, zeroconf: zeroconf, suffix: suffix)
    }

    func testAllListsTypesAndInstancesOfAvahiAndZeroconfServices() throws {
        let foreign = try publishForeign()
        let hostA = try TestLAN.addresses(of: "a")
        let hostC = try TestLAN.addresses(of: "c")

        // Live first: it lists both as they are learned. (A browse right after another one
        // ended may not make avahi-daemon ask again at once, and python-zeroconf does not
        // announce its types unasked: --once could then miss them; see README "Limits".)
        let live = try TestLAN.run("svc-browse", on: "b", ["--all", "--json"])
        for name in [foreign.avahiName, foreign.zeroconfName] {
            XCTAssertNotNil(live.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }, live.transcript)
        }

        let json = try TestLAN.run("svc-browse", on: "b", ["--all", "--once", "--resolve", "--json"])
        XCTAssertEqual(json.waitForExit(timeout: 20), 0, json.transcript)
        let events = json.jsonEvents
        for type in [foreign.avahiType, foreign.zeroconfType] {
            let added = events.first { $0["event"] as? String == "type-added" && $0["type"] as? String == type }
            XCTAssertEqual(added?["domain"] as? String, "local.", json.transcript)
            XCTAssertEqual(added?["interfaces"] as? [String], ["veth0"], json.transcript)
        }
        let avahi = try XCTUnwrap(events.first { $0["event"] as? String == "added" && $0["name"] as? String == foreign.avahiName }, json.transcript)
        XCTAssertEqual(avahi["type"] as? String, foreign.avahiType)
        XCTAssertEqual(avahi["port"] as? Int, 4242)
        XCTAssertEqual(avahi["txt"] as? NSDictionary, ["from": "avahi"])
        XCTAssertTrue((avahi["addresses"] as? [String] ?? []).contains(hostA.ipv4), "\(avahi)")
        let zeroconf = try XCTUnwrap(events.first { $0["event"] as? String == "added" && $0["name"] as? String == foreign.zeroconfName }, json.transcript)
        XCTAssertEqual(zeroconf["type"] as? String, foreign.zeroconfType)
        XCTAssertEqual(zeroconf["port"] as? Int, 5000)
        XCTAssertEqual(zeroconf["addresses"] as? [String], [hostC.ipv4])
        XCTAssertEqual(events.last?["event"] as? String, "complete", json.transcript)
        // A type comes before its instances.
        let typeLine = try XCTUnwrap(events.firstIndex { $0["type"] as? String == foreign.zeroconfType })
        XCTAssertEqual(events[typeLine]["event"] as? String, "type-added")

        let human = try TestLAN.run("svc-browse", on: "b", ["--all", "--once"])
        XCTAssertEqual(human.waitForExit(timeout: 20), 0, human.transcript)
        for line in ["type-added \(foreign.avahiType) local. on veth0", "type-added \(foreign.zeroconfType) local. on veth0",
                     "added \"\(foreign.avahiName)\" \(foreign.avahiType) local. on veth0",
                     "added \"\(foreign.zeroconfName)\" \(foreign.zeroconfType) local. on veth0"] {
            XCTAssertTrue(human.stdout.contains(line), "missing '\(line)' in\n\(human.transcript)")
        }

        // Live: publishers that leave take their instances with them; Avahi also withdraws the
        // type once its last service is gone (python-zeroconf leaves the type record to expire).
        for publisher in [foreign.zeroconf, foreign.avahi] {
            publisher.signal(SIGTERM)
            XCTAssertNotNil(publisher.waitForExit(), publisher.transcript)
        }
        for name in [foreign.zeroconfName, foreign.avahiName] {
            XCTAssertNotNil(live.waitForEvent { $0["event"] as? String == "removed" && $0["name"] as? String == name }, live.transcript)
        }
        XCTAssertNotNil(live.waitForEvent { $0["event"] as? String == "type-removed" && $0["type"] as? String == foreign.avahiType }, live.transcript)
        live.signal(SIGINT)
        XCTAssertEqual(live.waitForExit(), 0, live.transcript)
    }

    func testInterfaceLimitsTheBrowse() throws {
        let foreign = try publishForeign()
        let onLAN = try TestLAN.run("svc-browse", on: "b", ["--all", "--json", "--interface", "veth0"])
        for name in [foreign.avahiName, foreign.zeroconfName] {
            let added = onLAN.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }
            XCTAssertEqual(added?["interfaces"] as? [String], ["veth0"], onLAN.transcript)
        }
        onLAN.signal(SIGINT)
        XCTAssertEqual(onLAN.waitForExit(), 0, onLAN.transcript)
        let single = try TestLAN.run("svc-browse", on: "b", ["--type", foreign.zeroconfType, "--once", "--json", "--interface", "veth0"])
        XCTAssertEqual(single.waitForExit(timeout: 20), 0, single.transcript)
        XCTAssertNotNil(single.jsonEvents.first { $0["event"] as? String == "added" && $0["name"] as? String == foreign.zeroconfName }, single.transcript)

        // Nothing is announced on the loopback interface: the same browse there finds nothing.
        for arguments in [["--all"], ["--type", foreign.zeroconfType]] {
            let loopback = try TestLAN.run("svc-browse", on: "b", arguments + ["--once", "--json", "--interface", "lo"])
            XCTAssertEqual(loopback.waitForExit(timeout: 20), 0, loopback.transcript)
            XCTAssertEqual(loopback.jsonEvents.compactMap { $0["event"] as? String }, ["complete"], loopback.transcript)
        }
        foreign.zeroconf.signal(SIGTERM)
        foreign.avahi.signal(SIGTERM)
        _ = foreign.zeroconf.waitForExit()
        _ = foreign.avahi.waitForExit()
    }

    func testAllRecoversWhenItsDaemonRestarts() throws {
        let suffix = UInt32.random(in: 1000...9999)
        let before = try TestLAN.command(on: "a", ["avahi-publish", "-s", "Before \(suffix)", "_bf\(suffix)._tcp", "4242"])
        XCTAssertNotNil(waitForStderr(before) { $0.hasPrefix("Established under name") }, before.transcript)
        let browser = try TestLAN.run("svc-browse", on: "b", ["--all", "--json"])
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == "Before \(suffix)" }, browser.transcript)

        XCTAssertEqual(try TestLAN.control(["daemon", "restart", "b"]), 0)
        let after = try TestLAN.command(on: "a", ["avahi-publish", "-s", "After \(suffix)", "_af\(suffix)._tcp", "4243"])
        XCTAssertNotNil(waitForStderr(after) { $0.hasPrefix("Established under name") }, after.transcript)
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "type-added" && $0["type"] as? String == "_af\(suffix)._tcp" }, browser.transcript)
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == "After \(suffix)" }, browser.transcript)
        XCTAssertNotNil(waitForStderr(browser) { $0.contains("avahi-daemon is back; browsing resumed") }, browser.transcript)
        // What was there before the restart and still is was found again, not removed.
        // (A type that only the old daemon's cache held, left by an earlier test, may go.)
        XCTAssertNil(browser.jsonEvents.first { ($0["event"] as? String)?.hasSuffix("removed") == true
                                                && ($0["name"] as? String == "Before \(suffix)" || $0["type"] as? String == "_bf\(suffix)._tcp") },
                     browser.transcript)
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        for publisher in [before, after] {
            publisher.signal(SIGTERM)
            _ = publisher.waitForExit()
        }
    }
}
