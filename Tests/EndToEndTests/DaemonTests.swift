import Foundation
import XCTest

/// Conflicts, daemon restarts and missing daemons.
final class DaemonTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func registered(_ tool: ToolProcess) -> String? {
        tool.waitForEvent { $0["event"] as? String == "registered" }?["name"] as? String
    }

    func listing(on host: String, lan: String = TestLAN.main) throws -> [String] {
        let browser = try TestLAN.run("svc-browse", on: host, lan: lan, ["--once", "--json"])
        _ = browser.waitForExit()
        return browser.jsonEvents.compactMap { $0["name"] as? String }
    }

    func testConflictRenamesOrFailsByPolicy() throws {
        let name = TestLAN.uniqueName("dup")
        let first = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(first), name, first.transcript)
        let second = try TestLAN.run("svc-publish", on: "b", ["--name", name, "--json"])
        let renamed = try XCTUnwrap(registered(second), second.transcript)
        XCTAssertNotEqual(renamed, name)
        XCTAssertTrue(renamed.hasPrefix(name), renamed)
        let seen = try listing(on: "a")
        XCTAssertTrue(seen.contains(name) && seen.contains(renamed), "\(seen)")

        let strict = try TestLAN.run("svc-publish", on: "b", ["--name", name, "--conflict", "fail"])
        XCTAssertEqual(strict.waitForExit(timeout: 15), 73, strict.transcript)
        let message = strict.stderr.joined(separator: "\n")
        XCTAssertTrue(message.contains("'\(name)' is already in use"), message)
        XCTAssertFalse(try listing(on: "a").contains { $0.hasPrefix(name) && $0 != name && $0 != renamed }, "the refused name was withdrawn")
        for publisher in [first, second] {
            publisher.signal(SIGTERM)
            XCTAssertEqual(publisher.waitForExit(), 0)
        }
    }

    /// On the same host the daemon refuses a name it holds at once (not in a reply): the
    /// default policy still renames, and `--conflict fail` still exits 73.
    func testAConflictOnTheSameHostRenamesToo() throws {
        let name = TestLAN.uniqueName("twice")
        let first = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(first), name, first.transcript)
        let second = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        let renamed = try XCTUnwrap(registered(second), second.transcript)
        XCTAssertTrue(renamed != name && renamed.hasPrefix(name), renamed)
        let strict = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--conflict", "fail"])
        XCTAssertEqual(strict.waitForExit(timeout: 15), 73, strict.transcript)
        for publisher in [first, second] {
            publisher.signal(SIGTERM)
            XCTAssertEqual(publisher.waitForExit(), 0)
        }
    }

    func testRegistrationSurvivesADaemonRestart() throws {
        let name = TestLAN.uniqueName("survivor")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(publisher), name, publisher.transcript)
        XCTAssertEqual(try TestLAN.control(["daemon", "restart", "a"]), 0)
        let restarted = Date()
        var visible = false
        while !visible && Date().timeIntervalSince(restarted) < 10 {
            visible = try listing(on: "b").contains(name)
        }
        XCTAssertTrue(visible, "not visible again within 10 s\n" + publisher.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "restored" && $0["name"] as? String == name }, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains { $0.contains("avahi-daemon stopped answering: it is restarting, or was stopped") && $0.contains("registered again as soon as it is back")
                                         && !$0.contains("install") },
                      publisher.transcript)
        XCTAssertTrue(publisher.process.isRunning)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testPublishersAndBrowsersSurviveADBusRestart() throws {
        let name = TestLAN.uniqueName("bus")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(publisher), name, publisher.transcript)
        let browser = try TestLAN.run("svc-browse", on: "b", ["--json"])
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }, browser.transcript)
        for host in ["a", "b"] {
            XCTAssertEqual(try TestLAN.control(["bus", "stop", host]), 0)
            XCTAssertEqual(try TestLAN.control(["bus", "start", host]), 0)
            XCTAssertEqual(try TestLAN.control(["daemon", "start", host]), 0)
        }
        XCTAssertNotNil(publisher.waitForEvent(timeout: 15) { $0["event"] as? String == "restored" }, publisher.transcript)
        let later = TestLAN.uniqueName("after bus")
        let second = try TestLAN.run("svc-publish", on: "a", ["--name", later, "--json"])
        XCTAssertEqual(registered(second), later, second.transcript)
        XCTAssertNotNil(browser.waitForEvent(timeout: 15) { $0["event"] as? String == "added" && $0["name"] as? String == later },
                        "the browser recovered by itself: " + browser.transcript)
        XCTAssertTrue(try listing(on: "b").contains(name), "the first service is visible again")
        for process in [publisher, second, browser] { process.signal(SIGTERM) }
        for process in [publisher, second, browser] { XCTAssertEqual(process.waitForExit(), 0, process.transcript) }
    }

    func testBrowseRecoversWhenItsDaemonRestarts() throws {
        let browser = try TestLAN.run("svc-browse", on: "b", ["--json"])
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "complete" }, browser.transcript)
        XCTAssertEqual(try TestLAN.control(["daemon", "restart", "b"]), 0)
        let name = TestLAN.uniqueName("after restart")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertEqual(registered(publisher), name, publisher.transcript)
        XCTAssertNotNil(browser.waitForEvent(timeout: 10) { $0["event"] as? String == "added" && $0["name"] as? String == name },
                        browser.transcript)
        XCTAssertTrue(browser.stderr.contains { $0.contains("avahi-daemon stopped answering: it is restarting, or was stopped") && $0.contains("browsing resumes as soon as it is back")
                                       && !$0.contains("install") },
                      browser.transcript)
        XCTAssertTrue(browser.stderr.contains { $0.contains("avahi-daemon is back; browsing resumed") }, browser.transcript)
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testEveryToolExits69WithoutDBus() throws {
        // A place for the key and known_peers (without one the tools exit 78 before trying
        // D-Bus), and nothing else from the test's environment.
        let configuration = FileManager.default.temporaryDirectory.appendingPathComponent("svc-nodbus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: configuration) }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus.sock", "PATH": "/usr/bin:/bin",
                           "XDG_CONFIG_HOME": configuration.path]
        for arguments in [["svc-publish"], ["svc-browse", "--once"], ["svc-browse", "--all", "--once"], ["svc-connect", "anything"]] {
            let tool = try ToolProcess(TestLAN.tool(arguments[0]), Array(arguments.dropFirst()), environment: environment)
            XCTAssertEqual(tool.waitForExit(timeout: 5), 69, tool.transcript)
            let message = tool.stderr.joined(separator: "\n")
            XCTAssertTrue(message.contains("cannot reach the D-Bus system bus at /nonexistent/bus.sock"), message)
            XCTAssertTrue(message.contains("service dbus start"), message)
        }
    }

    /// avahi-daemon gives up resolving a name after 5 s, and Avahi's dns_sd layer reports that
    /// with the code it uses for a stopped daemon (kDNSServiceErr_Unknown): with --timeout 8 the
    /// daemon's answer comes first, and svc-connect had said "avahi-daemon is not running"
    /// (exit 69) while both daemons ran. It is a name nobody answered for (68).
    func testConnectingToANameNobodyPublishesBlamesNoDaemon() throws {
        let name = TestLAN.uniqueName("Nobody here")
        let connect = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "8", "--message", "hi"])
        XCTAssertEqual(connect.waitForExit(timeout: 20), 68, connect.transcript)
        let message = connect.stderr.joined(separator: "\n")
        XCTAssertFalse(message.contains("not running"), message)
        XCTAssertTrue(message.contains("nothing on the network answered while resolving \"\(name)\" of type _p2pipp._tcp in local.: avahi-daemon runs and gave up after its own 5 s limit"), message)
    }

    func testEveryToolExits69WithoutAvahiDaemon() throws {
        XCTAssertEqual(try TestLAN.control(["daemon", "stop", "b"]), 0)
        defer { XCTAssertEqual(try? TestLAN.control(["daemon", "start", "b"]), 0) }
        for arguments in [["svc-publish"], ["svc-browse", "--once"], ["svc-browse", "--all", "--once"], ["svc-connect", "anything"]] {
            let tool = try TestLAN.run(arguments[0], on: "b", Array(arguments.dropFirst()))
            XCTAssertEqual(tool.waitForExit(timeout: 5), 69, tool.transcript)
            let message = tool.stderr.joined(separator: "\n")
            XCTAssertTrue(message.contains("avahi-daemon is not running"), message)
            XCTAssertTrue(message.contains("service avahi-daemon start"), message)
        }
    }

    func testInteroperatesWithAvahisOwnTools() throws {
        let name = "interop-\(UInt16.random(in: 1000...9999))"
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--txt", "k=v", "--json"])
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int, publisher.transcript)
        let key = try XCTUnwrap(registered["key"] as? String, publisher.transcript)
        let avahiBrowse = try TestLAN.command(on: "b", ["avahi-browse", "-rpt", "_p2pipp._tcp"])
        XCTAssertEqual(avahiBrowse.waitForExit(timeout: 15), 0, avahiBrowse.transcript)
        // The publisher's key goes in front of the user's items, and nothing else is added.
        XCTAssertTrue(avahiBrowse.stdout.contains { $0 == "=;veth0;IPv4;\(name);_p2pipp._tcp;local;\(TestLAN.main)-a.local;10.77.0.1;\(port);\"key=\(key)\" \"k=v\"" },
                      avahiBrowse.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)

        let foreignName = "avahi-\(UInt16.random(in: 1000...9999))"
        let foreign = try TestLAN.command(on: "a", ["avahi-publish", "-s", foreignName, "_p2pipp._tcp", "4242", "k=v", "flag"])
        defer { foreign.signal(SIGTERM); _ = foreign.waitForExit() }
        let browser = try TestLAN.run("svc-browse", on: "b", ["--resolve", "--json"])
        let added = try XCTUnwrap(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == foreignName },
                                  browser.transcript + foreign.transcript)
        XCTAssertEqual(added["port"] as? Int, 4242)
        XCTAssertEqual(added["txt"] as? NSDictionary, ["k": "v", "flag": true])
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0)
    }

    func testIPv6LinkLocalOnly() throws {
        let name = TestLAN.uniqueName("v6")
        let hostA = try TestLAN.addresses(of: "a", lan: TestLAN.ipv6Only)
        XCTAssertEqual(hostA.ipv4, "", "the v6 LAN has no IPv4")
        let publisher = try TestLAN.run("svc-publish", on: "a", lan: TestLAN.ipv6Only, ["--name", name, "--json"])
        let port = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }?["port"] as? Int, publisher.transcript)
        let browser = try TestLAN.run("svc-browse", on: "b", lan: TestLAN.ipv6Only, ["--resolve", "--json"])
        let added = try XCTUnwrap(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }, browser.transcript)
        XCTAssertEqual(added["addresses"] as? [String], ["\(hostA.ipv6)%veth0"])
        let client = try TestLAN.run("svc-connect", on: "b", lan: TestLAN.ipv6Only, [name, "--message", "over v6"])
        XCTAssertEqual(client.waitForExit(), 0, client.transcript)
        XCTAssertEqual(client.stdout.first, "hello from \(name)")
        XCTAssertTrue(client.stderr.contains { $0.contains("at [\(hostA.ipv6)%veth0]:\(port) over IPv6, its only address") }, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "over v6" }, publisher.transcript)
        browser.signal(SIGINT)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
        XCTAssertEqual(browser.waitForExit(), 0)
    }
}
