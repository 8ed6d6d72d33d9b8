import DNSSD
import DiscoveryCore
import Foundation
import XCTest

/// The DNSSD library used in-process against a virtual host's daemon (reached over that
/// host's D-Bus socket), checked from the other host with the real tools.
final class LibraryTests: XCTestCase {
    override func setUpWithError() throws {
        try TestLAN.require()
        setenv("AVAHI_COMPAT_NOWARN", "1", 1)
    }

    override func tearDown() { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }

    /// Points the next DNS-SD calls of this process at `host`'s daemon.
    func useDaemon(of host: String) throws {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", try XCTUnwrap(TestLAN.settings(of: host)["BUS"]), 1)
    }

    /// The TXT record `host` sees for `name`, or nil when `host` does not list it.
    func txtSeen(from host: String, for name: String) throws -> NSDictionary? {
        let browser = try TestLAN.run("svc-browse", on: host, ["--once", "--resolve", "--json"])
        _ = browser.waitForExit()
        return browser.jsonEvents.first { $0["name"] as? String == name }?["txt"] as? NSDictionary
    }

    /// Asks `txtSeen` until it returns `expected` or `timeout` passes; returns the last answer.
    func waitForTXT(_ expected: NSDictionary?, from host: String, for name: String, timeout: TimeInterval = 5) throws -> NSDictionary? {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = try txtSeen(from: host, for: name)
        while seen != expected && Date() < deadline { seen = try txtSeen(from: host, for: name) }
        return seen
    }

    func testTXTUpdateAndWithdrawalReachOtherHosts() async throws {
        let name = TestLAN.uniqueName("library")
        try useDaemon(of: "a")
        let registration = try await ServiceRegistration.register(.init(
            name: try InstanceName(name), port: 4321, txt: try TXTRecord(items: ["v=1"])))
        XCTAssertEqual(registration.name, name)
        XCTAssertEqual(try txtSeen(from: "b", for: name), ["v": "1"])

        try registration.updateTXT(try TXTRecord(items: ["v=2", "extra"]))
        XCTAssertEqual(try waitForTXT(["v": "2", "extra": true], from: "b", for: name), ["v": "2", "extra": true])

        // Peers drop a withdrawn record one second after its goodbye (RFC 6762 §10.1).
        await registration.cancel()
        XCTAssertNil(try waitForTXT(nil, from: "b", for: name, timeout: 3), "b still lists the withdrawn service")
    }

    func testBrowseStreamReportsAnInstanceOnceAndCompletes() async throws {
        let name = TestLAN.uniqueName("stream")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        try useDaemon(of: "b")
        var added = 0
        var completed = false
        for try await event in try await ServiceBrowser(type: .p2pipp).start() {
            if case .added(let instance, let interfaces) = event, instance.name == name {
                added += 1
                XCTAssertEqual(interfaces.count, 1, "reported per IPv4 and IPv6, merged into one")
            }
            if event == .completeForNow { completed = true; break }
        }
        XCTAssertEqual(added, 1)
        XCTAssertTrue(completed)

        let resolved = try await ServiceInstance(name: name, type: .p2pipp, domain: .local).resolve()
        XCTAssertEqual(resolved.hostTarget, "\(TestLAN.main)-a.local.")
        let endpoints = try await resolved.lookUpAddresses()
        XCTAssertEqual(endpoints.first?.address.family, .ipv6, "IPv6 comes first")
        XCTAssertTrue(endpoints.contains { $0.address.description == "10.77.0.1" }, "\(endpoints)")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
