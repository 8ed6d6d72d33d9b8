import Foundation
import XCTest

/// Unicast DNS-SD across a router (issue 15): svc-publish registers in the BIND zone of the
/// two-subnet LAN by signed DNS UPDATE, and hosts on the other subnet find it there.
final class WideAreaTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    var lan: String { TestLAN.wide }

    /// A command on a host of the two-subnet LAN, run to its end.
    func finished(on host: String, _ arguments: [String], timeout: TimeInterval = 20) throws -> (status: Int32?, process: ToolProcess) {
        let process = try TestLAN.command(on: host, lan: lan, arguments)
        process.closeStdin()
        return (process.waitForExit(timeout: timeout), process)
    }

    func dig(from host: String, _ name: String, _ type: String) throws -> [String] {
        let server = try XCTUnwrap(try TestLAN.settings(of: host, lan: lan)["DNS_SERVER"])
        return try finished(on: host, ["dig", "+short", "@\(server)", name, type]).process.stdout
    }

    /// The tag of a room's host name: the first 4 bytes of its key (`SHA256:` and base64) in hex.
    func keyTag(_ key: String) throws -> String {
        let base64 = String(key.dropFirst("SHA256:".count))
        let bytes = try XCTUnwrap(Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)), key)
        return bytes.prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// svc-publish on a with the LAN's zone, server and key (`extra` appended).
    func publish(_ name: String, on host: String = "a", _ extra: [String] = []) throws -> ToolProcess {
        let settings = try TestLAN.settings(of: host, lan: lan)
        return try TestLAN.run("svc-publish", on: host, lan: lan, ["--name", name, "--domain", "lab.test.", "--dns-server", settings["DNS_SERVER"]!,
                                                                   "--tsig-key", settings["TSIG_KEY"]!, "--json"] + extra)
    }

    func testRegistrationIsSeenByDigFromTheOtherSubnetAndWithdrawnOnSIGTERM() throws {
        let name = TestLAN.uniqueName("wide")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let publisher = try publish(name)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        XCTAssertEqual(registered["name"] as? String, name)
        XCTAssertEqual(registered["domain"] as? String, "lab.test.")
        let port = try XCTUnwrap(registered["port"] as? Int)
        let key = try XCTUnwrap(registered["key"] as? String)

        XCTAssertTrue(try dig(from: "b", "_p2pipp._tcp.lab.test.", "PTR").contains("\(label)._p2pipp._tcp.lab.test."))
        let srv = try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV")
        XCTAssertEqual(srv.count, 1, "\(srv)")
        let fields = srv.first?.split(separator: " ") ?? []
        XCTAssertEqual(fields.count, 4, "\(srv)")
        XCTAssertEqual(fields.prefix(3).map(String.init), ["0", "0", String(port)])
        let target = String(fields.last ?? "")
        XCTAssertTrue(target.hasSuffix(".lab.test."), target)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "TXT"), ["\"key=\(key)\""])
        XCTAssertTrue(try dig(from: "b", target, "A").contains("10.78.1.1"), "the SRV target must carry a's routable address")
        // TTLs are short: records a crashed publisher leaves do not linger in caches.
        let ttl = try finished(on: "b", ["dig", "+noall", "+answer", "@10.78.1.53", "\(label)._p2pipp._tcp.lab.test.", "SRV"]).process.stdout
        XCTAssertEqual(ttl.first?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first, "30", "\(ttl)")

        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
        XCTAssertFalse(try dig(from: "b", "_p2pipp._tcp.lab.test.", "PTR").contains("\(label)._p2pipp._tcp.lab.test."))
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV"), [])
    }

    func testBrowseResolveConnectAndTalkAcrossTheRouter() throws {
        let name = TestLAN.uniqueName("across")
        let publisher = try publish(name)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int)
        let key = try XCTUnwrap(registered["key"] as? String)

        // b is on the other subnet: it finds the room in the zone through its resolv.conf server.
        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "lab.test.", "--resolve", "--json"])
        let added = try XCTUnwrap(browser.waitForEvent { $0["event"] as? String == "added" && $0["name"] as? String == name }, browser.transcript)
        XCTAssertEqual(added["domain"] as? String, "lab.test.")
        // The host name is a's, tagged with the room key's first 4 bytes (the room's own name).
        XCTAssertEqual(added["host"] as? String, "\(lan)-a-\(try keyTag(key)).lab.test.")
        XCTAssertEqual(added["port"] as? Int, port)
        // Both families are routed: the A and the AAAA of a's ULA address.
        XCTAssertEqual(added["addresses"] as? [String], ["10.78.1.1", "fd78:1::1"])
        XCTAssertEqual(added["txt"] as? NSDictionary, ["key": key])
        XCTAssertNotNil(browser.waitForEvent { $0["event"] as? String == "complete" }, browser.transcript)

        let client = try TestLAN.run("svc-connect", on: "b", lan: lan, ["--domain", "lab.test.", name, "--as", "bea"])
        XCTAssertNotNil(client.waitForLine { $0 == "hello from \(name)" }, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "bea" }, publisher.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("connected to \"\(name)\" at 10.78.1.1:\(port)") }, client.transcript)
        client.send("line from b")
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == "bea" && $0["text"] as? String == "line from b" },
                        publisher.transcript)
        publisher.send("line from a")
        XCTAssertNotNil(client.waitForLine { $0 == "\(name): line from a" }, client.transcript)

        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
        XCTAssertNotNil(browser.waitForEvent(timeout: 8) { $0["event"] as? String == "removed" && $0["name"] as? String == name }, browser.transcript)
        client.closeStdin()
        client.signal(SIGTERM)
        _ = client.waitForExit(timeout: 10)
        browser.signal(SIGTERM)
        XCTAssertEqual(browser.waitForExit(timeout: 10), 0, browser.transcript)
    }

    func testANameAnotherHostHoldsIsRenamedOrRefused() throws {
        let name = TestLAN.uniqueName("taken")
        let first = try publish(name, on: "a")
        XCTAssertNotNil(first.waitForEvent { $0["event"] as? String == "registered" && $0["name"] as? String == name }, first.transcript)

        let refused = try publish(name, on: "b", ["--conflict", "fail"])
        XCTAssertEqual(refused.waitForExit(timeout: 20), 73, refused.transcript)
        XCTAssertTrue(refused.stderr.contains { $0.contains("the name \"\(name)\" is taken in the zone by another host") }, refused.transcript)

        let renamed = try publish(name, on: "b")
        XCTAssertNotNil(renamed.waitForEvent { $0["event"] as? String == "registered" && $0["name"] as? String == "\(name) (2)" }, renamed.transcript)
        let browse = try TestLAN.run("svc-browse", on: "a", lan: lan, ["--domain", "lab.test.", "--once"])
        XCTAssertEqual(browse.waitForExit(timeout: 20), 0, browse.transcript)
        XCTAssertTrue(browse.stdout.contains("added \"\(name)\" _p2pipp._tcp lab.test."), browse.transcript)
        XCTAssertTrue(browse.stdout.contains("added \"\(name) (2)\" _p2pipp._tcp lab.test."), browse.transcript)
        for publisher in [first, renamed] {
            publisher.signal(SIGTERM)
            XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
        }
    }

    func testConnectingToANameNotInTheZoneListsWhatIs() throws {
        let client = try TestLAN.run("svc-connect", on: "b", lan: lan, ["--domain", "lab.test.", "nobody here", "--message", "x"])
        XCTAssertEqual(client.waitForExit(timeout: 20), 68, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("no service named \"nobody here\" in lab.test.") }, client.transcript)
    }

    func testAZoneTheDNSServerDoesNotServeIsNamedByBrowse() throws {
        let browse = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "nozone.test.", "--once"])
        XCTAssertEqual(browse.waitForExit(timeout: 20), 78, browse.transcript)
        XCTAssertTrue(browse.stderr.contains { $0.contains("does not serve the zone nozone.test.; check --domain and the DNS server") }, browse.transcript)
    }

    func testFiftyInstancesAddedWithNsupdateAreAllListed() throws {
        // 50 PTRs with long names make an answer of about 4 KB: more than one EDNS0 UDP
        // packet (1232 bytes), so only the TCP fallback lists them all (Avahi showed 9 of 30).
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let tag = UInt32.random(in: 1000...9999)
        let names = (1...50).map { String(format: "bulk %@ instance number %02d with a long name", String(tag), $0) }
        var script = "server \(settings["DNS_SERVER"]!)\nzone lab.test.\n"
        for name in names {
            script += "update add _p2pipp._tcp.lab.test. 30 IN PTR \(name.replacingOccurrences(of: " ", with: "\\032"))._p2pipp._tcp.lab.test.\n"
        }
        script += "send\n"
        let add = try TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
        add.send(script)
        add.closeStdin()
        XCTAssertEqual(add.waitForExit(timeout: 20), 0, add.transcript)
        defer {
            let remove = try? TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
            remove?.send("server \(settings["DNS_SERVER"]!)\nzone lab.test.\n" + names.map {
                "update delete _p2pipp._tcp.lab.test. PTR \($0.replacingOccurrences(of: " ", with: "\\032"))._p2pipp._tcp.lab.test.\n"
            }.joined() + "send\n")
            remove?.closeStdin()
            _ = remove?.waitForExit(timeout: 20)
        }

        let browse = try TestLAN.run("svc-browse", on: "a", lan: lan, ["--domain", "lab.test.", "--once"])
        XCTAssertEqual(browse.waitForExit(timeout: 20), 0, browse.transcript)
        let listed = browse.stdout.filter { $0.contains("bulk \(tag) ") }
        XCTAssertEqual(listed.count, 50, browse.transcript)
        for name in names {
            XCTAssertTrue(listed.contains("added \"\(name)\" _p2pipp._tcp lab.test."), name)
        }
    }

    func testRecordsRemovedBehindThePublishersBackAreRegisteredAgain() throws {
        let name = TestLAN.uniqueName("kept")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let publisher = try publish(name)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let remove = try TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
        remove.send("server \(settings["DNS_SERVER"]!)\nzone lab.test.\nupdate delete \(label)._p2pipp._tcp.lab.test.\n" +
                    "update delete _p2pipp._tcp.lab.test. PTR \(label)._p2pipp._tcp.lab.test.\nsend\n")
        remove.closeStdin()
        XCTAssertEqual(remove.waitForExit(timeout: 20), 0, remove.transcript)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV"), [])
        // The next refresh (every 10 s) finds its SRV gone and registers again.
        XCTAssertNotNil(publisher.waitForEvent(timeout: 15) { $0["event"] as? String == "restored" && $0["name"] as? String == name }, publisher.transcript)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").count, 1)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
    }

    func testACrashedPublishersRecordsAreTakenBackByItsSuccessorOnTheSameHost() throws {
        let name = TestLAN.uniqueName("crashed")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let crashed = try publish(name)
        let first = try XCTUnwrap(crashed.waitForEvent { $0["event"] as? String == "registered" }, crashed.transcript)
        crashed.signal(SIGKILL)
        _ = crashed.waitForExit(timeout: 10)
        // BIND keeps the records (it ignores update leases): the name is taken by a leftover.
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").count, 1)

        // On the same host, nothing serves the old port: the records are provably ours and
        // are replaced, even under --conflict fail. Another host's would not be (see above).
        let successor = try publish(name, ["--conflict", "fail"])
        let second = try XCTUnwrap(successor.waitForEvent { $0["event"] as? String == "registered" }, successor.transcript)
        XCTAssertEqual(second["name"] as? String, name)
        let port = try XCTUnwrap(second["port"] as? Int)
        XCTAssertNotEqual(port, first["port"] as? Int)
        let srv = try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV")
        XCTAssertEqual(srv.count, 1, "\(srv)")
        XCTAssertTrue(srv.first?.hasPrefix("0 0 \(port) \(lan)-a-") == true, "\(srv)")
        successor.signal(SIGTERM)
        XCTAssertEqual(successor.waitForExit(timeout: 10), 0, successor.transcript)
    }

    func testWithdrawRemovesOnlyACrashedPublishersLeftover() throws {
        let name = TestLAN.uniqueName("gone")
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let live = try publish(name)
        let registered = try XCTUnwrap(live.waitForEvent { $0["event"] as? String == "registered" }, live.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int)

        // Served right now: --withdraw leaves it alone (75); from the other host it is not theirs (73).
        let early = try publish(name, ["--withdraw"])
        XCTAssertEqual(early.waitForExit(timeout: 20), 75, early.transcript)
        XCTAssertTrue(early.stderr.contains { $0.contains("is served on this host (port \(port)): stop that svc-publish instead") }, early.transcript)
        let foreign = try publish(name, on: "b", ["--withdraw"])
        XCTAssertEqual(foreign.waitForExit(timeout: 20), 73, foreign.transcript)
        XCTAssertTrue(foreign.stderr.contains { $0.contains("belongs to another host (\(lan)-a-") }, foreign.transcript)

        live.signal(SIGKILL)
        _ = live.waitForExit(timeout: 10)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").count, 1, "a crash leaves the records")
        let withdraw = try publish(name, ["--withdraw"])
        XCTAssertEqual(withdraw.waitForExit(timeout: 20), 0, withdraw.transcript)
        let event = try XCTUnwrap(withdraw.jsonEvents.first, withdraw.transcript)
        XCTAssertEqual(event["event"] as? String, "withdrawn")
        XCTAssertEqual(event["port"] as? Int, port)
        XCTAssertEqual(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV"), [])
        XCTAssertFalse(try dig(from: "b", "_p2pipp._tcp.lab.test.", "PTR").contains("\(label)._p2pipp._tcp.lab.test."))

        let again = try publish(name, ["--withdraw"])
        XCTAssertEqual(again.waitForExit(timeout: 20), 0, again.transcript)
        XCTAssertTrue(again.stderr.contains { $0.contains("is not registered in lab.test.: nothing to withdraw") }, again.transcript)
    }

    func testTheRegistrationFollowsTheHostsAddresses() throws {
        let name = TestLAN.uniqueName("moving")
        let publisher = try publish(name)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let label = name.replacingOccurrences(of: " ", with: "\\032")
        let host = String(try XCTUnwrap(try dig(from: "b", "\(label)._p2pipp._tcp.lab.test.", "SRV").first?.split(separator: " ").last))
        XCTAssertEqual(try dig(from: "b", host, "A"), ["10.78.1.1"])
        // A second address on a's cable (a new lease): the next refresh (every 10 s) adds it,
        // and once it is gone again, removes it.
        let extra = try finished(on: "a", ["ip", "addr", "add", "10.78.1.111/24", "dev", "veth0"])
        XCTAssertEqual(extra.status, 0, extra.process.transcript)
        defer { _ = try? finished(on: "a", ["ip", "addr", "del", "10.78.1.111/24", "dev", "veth0"]) }
        var deadline = Date().addingTimeInterval(15)
        while try dig(from: "b", host, "A").sorted() != ["10.78.1.1", "10.78.1.111"] && Date() < deadline { usleep(500_000) }
        XCTAssertEqual(try dig(from: "b", host, "A").sorted(), ["10.78.1.1", "10.78.1.111"])
        XCTAssertEqual(try finished(on: "a", ["ip", "addr", "del", "10.78.1.111/24", "dev", "veth0"]).status, 0)
        deadline = Date().addingTimeInterval(15)
        while try dig(from: "b", host, "A") != ["10.78.1.1"] && Date() < deadline { usleep(500_000) }
        XCTAssertEqual(try dig(from: "b", host, "A"), ["10.78.1.1"])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
    }

    func testAvahisOwnBrowserResolvesWhatSvcRegistered() throws {
        let name = "interop-\(UInt32.random(in: 1000...9999))"
        let publisher = try publish(name)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = try XCTUnwrap(registered["port"] as? Int)
        let key = try XCTUnwrap(registered["key"] as? String)
        // avahi-daemon on b (wide-area on, resolv.conf naming the DNS host) reads the zone.
        let browse = try finished(on: "b", ["avahi-browse", "-d", "lab.test", "-r", "-t", "-p", "_p2pipp._tcp"])
        XCTAssertEqual(browse.status, 0, browse.process.transcript)
        let resolved = browse.process.stdout.first { $0.hasPrefix("=;") && $0.contains(";\(name);") }
        let fields = try XCTUnwrap(resolved, browse.process.transcript).split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(fields.count, 10, "\(fields)")
        XCTAssertEqual(fields[5], "lab.test")
        XCTAssertEqual(fields[6], "\(lan)-a-\(try keyTag(key)).lab.test")
        XCTAssertEqual(fields[7], "10.78.1.1")
        XCTAssertEqual(fields[8], String(port))
        XCTAssertEqual(fields[9], "\"key=\(key)\"")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
    }

    func testAKeyTheZoneDoesNotGrantIsRefusedWithItsReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wrong = directory.appendingPathComponent("wrong.key").path
        let make = try ToolProcess("/bin/sh", ["-c", "umask 077; tsig-keygen -a hmac-sha256 svc-\(lan) > '\(wrong)'"])
        XCTAssertEqual(make.waitForExit(), 0, make.transcript)
        let secret = try String(contentsOfFile: wrong, encoding: .utf8).split(separator: "\"").dropFirst(3).first.map(String.init)

        let publisher = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.53", "--tsig-key", wrong])
        XCTAssertEqual(publisher.waitForExit(timeout: 20), 78, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains { $0.contains("did not accept the TSIG key 'svc-\(lan).'") && $0.contains("check that --tsig-key is the key the zone's update-policy grants") },
                      publisher.transcript)
        if let secret { XCTAssertFalse(publisher.transcript.contains(secret), "the secret must never be printed") }

        XCTAssertEqual(chmod(wrong, 0o644), 0)
        let loose = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.53", "--tsig-key", wrong])
        XCTAssertEqual(loose.waitForExit(timeout: 20), 78, loose.transcript)
        XCTAssertTrue(loose.stderr.contains { $0.contains("can be read or written by others (mode 644)") && $0.contains("run 'chmod 600 \(wrong)'") }, loose.transcript)
    }

    func testAZoneTheServerDoesNotServeIsNamed() throws {
        let key = try XCTUnwrap(try TestLAN.settings(of: "b", lan: lan)["TSIG_KEY"])
        let publisher = try TestLAN.run("svc-publish", on: "b", lan: lan, ["--domain", "nozone.test.", "--dns-server", "10.78.1.53", "--tsig-key", key])
        XCTAssertEqual(publisher.waitForExit(timeout: 20), 78, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains { $0.contains("does not serve the zone nozone.test.; check --domain and --dns-server") }, publisher.transcript)
    }
}
