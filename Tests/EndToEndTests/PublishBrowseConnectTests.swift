import Foundation
import XCTest

/// The whole job on two virtual hosts: publish on a, browse and connect from b.
final class PublishBrowseConnectTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func event(_ name: String, _ instance: String? = nil) -> ([String: Any]) -> Bool {
        { $0["event"] as? String == name && (instance == nil || $0["name"] as? String == instance) }
    }

    func testPublishBrowseConnectExchangeAndRemoval() throws {
        let name = TestLAN.uniqueName("e2e")
        let hostA = try TestLAN.addresses(of: "a")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--txt", "version=1", "--txt", "flag", "--json"])
        let registered = try XCTUnwrap(publisher.waitForEvent(where: event("registered")), publisher.transcript)
        XCTAssertEqual(registered["name"] as? String, name)
        XCTAssertEqual(registered["type"] as? String, "_p2pipp._tcp")
        XCTAssertEqual(registered["domain"] as? String, "local.")
        let port = try XCTUnwrap(registered["port"] as? Int)
        XCTAssertNotEqual(port, 0)
        let key = try XCTUnwrap(registered["key"] as? String, publisher.transcript)
        XCTAssertTrue(key.hasPrefix("SHA256:"), key)
        let shortKey = String(key.dropFirst("SHA256:".count).prefix(12))

        let browser = try TestLAN.run("svc-browse", on: "b", ["--resolve", "--json"])
        let added = try XCTUnwrap(browser.waitForEvent(where: event("added", name)), browser.transcript)
        XCTAssertEqual(added["port"] as? Int, port)
        XCTAssertEqual(added["host"] as? String, "\(TestLAN.main)-a.local.")
        XCTAssertEqual(added["interfaces"] as? [String], ["veth0"])
        let addresses = try XCTUnwrap(added["addresses"] as? [String])
        XCTAssertTrue(addresses.contains(hostA.ipv4), "\(addresses)")
        XCTAssertTrue(addresses.contains("\(hostA.ipv6)%veth0"), "\(addresses)")
        XCTAssertEqual(added["txt"] as? NSDictionary, ["key": key, "version": "1", "flag": true])
        // The user's items in the order given, then the room's key: the record's order.
        let keyItem = Array("key=\(key)".utf8)
        let keyItemHex = ([UInt8(keyItem.count)] + keyItem).map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(added["txt_raw"] as? String, "0976657273696f6e3d31" + "04666c6167" + keyItemHex)

        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", "bea"])
        XCTAssertNotNil(client.waitForLine { $0 == "hello from \(name)" }, client.transcript)
        XCTAssertNotNil(client.waitForLine { $0.hasPrefix("* joined as bea; the room's key is \(shortKey), safety code ") }, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "bea" }, publisher.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("connected to \"\(name)\" at [\(hostA.ipv6)%veth0]:\(port)") }, client.transcript)
        client.send("line from b")
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == "bea" && $0["text"] as? String == "line from b" },
                        publisher.transcript)
        publisher.send("line from a")
        XCTAssertNotNil(client.waitForLine { $0 == "\(name): line from a" }, client.transcript)

        // SIGTERM: the service is withdrawn at once; the client, told goodbye, waits for the
        // room to come back, and ends cleanly when its input ends.
        publisher.signal(SIGTERM)
        XCTAssertNotNil(browser.waitForEvent(timeout: 3, where: event("removed", name)), browser.transcript)
        XCTAssertEqual(publisher.waitForExit(timeout: 5), 0, publisher.transcript)
        let deadline = Date().addingTimeInterval(5)
        while !client.stderr.contains(where: { $0.contains("waiting for it to come back") }) && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(client.stderr.contains { $0.contains("the room closed") && $0.contains("waiting for it to come back") }, client.transcript)
        client.closeStdin()
        XCTAssertEqual(client.waitForExit(timeout: 3), 0, client.transcript)
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
    }

    func testManyClientsAtOnce() throws {
        let name = TestLAN.uniqueName("room")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent(where: event("registered")), publisher.transcript)
        let clients = try (1...3).map { try TestLAN.run("svc-connect", on: "b", [name, "--as", "m\($0)"]) }
        for client in clients {
            XCTAssertNotNil(client.waitForLine { $0 == "hello from \(name)" }, client.transcript)
        }
        for id in 1...3 {
            XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["client"] as? Int == id }, publisher.transcript)
        }
        publisher.send("to everyone")
        for client in clients {
            XCTAssertNotNil(client.waitForLine { $0 == "\(name): to everyone" }, client.transcript)
        }
        // Each client leaves when its input ends; the publisher sees every one go.
        for client in clients {
            client.closeStdin()
            XCTAssertEqual(client.waitForExit(), 0, client.transcript)
        }
        for id in 1...3 {
            XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "left" && $0["client"] as? Int == id }, publisher.transcript)
        }
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testUnusualNamesRoundTripThroughPublishBrowseAndConnect() throws {
        let names = ["打印机 #1 \(UInt16.random(in: 1...9999))", "a.b\\c \"q\" \(UInt16.random(in: 1...9999))", "dots.and spaces. \(UInt16.random(in: 1...9999))"]
        let publishers = try names.map { try TestLAN.run("svc-publish", on: "a", ["--name", $0, "--json"]) }
        for (name, publisher) in zip(names, publishers) {
            XCTAssertEqual(publisher.waitForEvent(where: event("registered"))?["name"] as? String, name, publisher.transcript)
        }
        let browser = try TestLAN.run("svc-browse", on: "b", ["--once", "--json"])
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        let seen = Set(browser.jsonEvents.compactMap { $0["event"] as? String == "added" ? $0["name"] as? String : nil })
        XCTAssertTrue(Set(names).isSubset(of: seen), "seen: \(seen)")

        let text = try TestLAN.run("svc-browse", on: "b", ["--once"])
        XCTAssertEqual(text.waitForExit(), 0)
        for name in names {
            // `"` and `\` are escaped inside the quotes: a name cannot end them early.
            let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            XCTAssertTrue(text.stdout.contains { $0.hasPrefix("added \"\(quoted)\" _p2pipp._tcp local. on veth0") }, text.transcript)
            let client = try TestLAN.run("svc-connect", on: "b", [name, "--message", "hi \(name)"])
            XCTAssertEqual(client.waitForExit(), 0, client.transcript)
            // The room's own name in its lines: escaped the same way, without the quotes.
            XCTAssertEqual(client.stdout.first, "hello from \(quoted)")
            XCTAssertTrue(client.stdout.contains { $0.hasPrefix("* in the room: \(quoted) (key ") }, "frames after our goodbye are still read: " + client.transcript)
        }
        for (name, publisher) in zip(names, publishers) {
            XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "hi \(name)" }, publisher.transcript)
            publisher.signal(SIGTERM)
            XCTAssertEqual(publisher.waitForExit(), 0)
        }
    }

    func testAnUnknownNameFailsWithTheNamesThatWereSeen() throws {
        let name = TestLAN.uniqueName("present")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent(where: event("registered")), publisher.transcript)
        XCTAssertNotNil(try TestLAN.run("svc-browse", on: "b", ["--json"]).waitForEvent(where: event("added", name)))
        let client = try TestLAN.run("svc-connect", on: "b", ["no such service", "--timeout", "2"])
        XCTAssertEqual(client.waitForExit(timeout: 10), 68, client.transcript)
        let message = client.stderr.joined(separator: "\n")
        XCTAssertTrue(message.contains("no service named \"no such service\""), message)
        XCTAssertTrue(message.contains("services seen:") && message.contains("\"\(name)\""), message)

        // With --json, a script reading the events learns why they stopped.
        let scripted = try TestLAN.run("svc-connect", on: "b", ["no such service", "--timeout", "2", "--json"])
        XCTAssertEqual(scripted.waitForExit(timeout: 10), 68, scripted.transcript)
        let error = try XCTUnwrap(scripted.jsonEvents.last, scripted.transcript)
        XCTAssertEqual(error["event"] as? String, "error")
        XCTAssertEqual(error["exit_code"] as? Int, 68)
        XCTAssertTrue((error["message"] as? String)?.contains("no service named \"no such service\"") == true, scripted.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testFiftyInstancesAreAllListedByOnce() throws {
        let base = TestLAN.uniqueName("many")
        let names = (1...50).map { "\(base)-\($0)" }
        let publishers = try names.map { try TestLAN.run("svc-publish", on: "a", ["--name", $0, "--json"]) }
        defer { publishers.forEach { $0.signal(SIGTERM) }; publishers.forEach { _ = $0.waitForExit() } }
        for publisher in publishers {
            XCTAssertNotNil(publisher.waitForEvent(timeout: 20, where: event("registered")), publisher.transcript)
        }
        let browser = try TestLAN.run("svc-browse", on: "b", ["--once", "--json"])
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        let seen = Set(browser.jsonEvents.compactMap { $0["name"] as? String })
        XCTAssertEqual(Set(names).subtracting(seen), [], "missing from the listing")
        XCTAssertEqual(browser.jsonEvents.last?["event"] as? String, "complete")
    }

    func testControlCharactersFromTheNetworkAreEscaped() throws {
        let evil = "evil\u{1B}[31m \(UInt16.random(in: 1...9999))"
        let foreign = try TestLAN.command(on: "a", ["avahi-publish", "-s", evil, "_p2pipp._tcp", "4243"])
        defer { foreign.signal(SIGTERM); _ = foreign.waitForExit() }
        let browser = try TestLAN.run("svc-browse", on: "b", [])
        let line = try XCTUnwrap(browser.waitForLine { $0.contains("evil") }, browser.transcript)
        XCTAssertFalse(line.contains("\u{1B}"), "a raw ESC reached the terminal")
        XCTAssertTrue(line.contains("evil\\u{1B}[31m"), line)
        browser.signal(SIGINT)
        _ = browser.waitForExit()

        let name = TestLAN.uniqueName("safe")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--no-timestamps"])
        XCTAssertNotNil(publisher.waitForLine { $0.hasPrefix("registered") }, publisher.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--message", "\u{1B}]0;pwned\u{7}"])
        XCTAssertEqual(client.waitForExit(), 0, client.transcript)
        let message = try XCTUnwrap(publisher.waitForLine { $0.contains("pwned") }, publisher.transcript)
        XCTAssertFalse(message.contains("\u{1B}"), "a raw ESC reached the terminal")
        XCTAssertTrue(message.hasSuffix(": \\u{1B}]0;pwned\\u{7}"), message)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
