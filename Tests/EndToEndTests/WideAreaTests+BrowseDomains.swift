import Foundation
import XCTest

/// Browse domains from the network (RFC 6763 section 11) on the two-subnet LAN, whose BIND
/// recommends lab.test. (b, db, lb, r, dr) in the zone and in each subnet's reverse zone.
extension WideAreaTests {
    func testDomainsListsWhatTheSearchDomainAndTheSubnetsReverseZoneRecommend() throws {
        for (host, reverse) in [("a", "0.1.78.10.in-addr.arpa."), ("b", "0.2.78.10.in-addr.arpa.")] {
            let listing = try finished(on: host, ["svc-browse", "--domains", "--json"])
            XCTAssertEqual(listing.status, 0, listing.process.transcript)
            let domains = listing.process.jsonEvents.filter { $0["event"] as? String == "domain" }
            XCTAssertEqual(domains.compactMap { $0["kind"] as? String }, ["browse", "default-browse", "legacy-browse", "register", "default-register"],
                           listing.process.transcript)
            for (domain, label) in zip(domains, ["b", "db", "lb", "r", "dr"]) {
                XCTAssertEqual(domain["domain"] as? String, "lab.test.")
                XCTAssertEqual(domain["queries"] as? [String], ["\(label)._dns-sd._udp.lab.test.", "\(label)._dns-sd._udp.\(reverse)"], listing.process.transcript)
            }
            XCTAssertEqual(listing.process.jsonEvents.last?["event"] as? String, "complete")
        }
        let text = try finished(on: "b", ["svc-browse", "--domains"])
        XCTAssertEqual(text.status, 0, text.process.transcript)
        XCTAssertEqual(text.process.stdout.first, "browse lab.test. (b._dns-sd._udp.lab.test., b._dns-sd._udp.0.2.78.10.in-addr.arpa.)")
    }

    func testARecommendedDomainWithControlBytesIsPrintedEscaped() throws {
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let record = "b._dns-sd._udp.lab.test. 30 IN PTR evil\\027[2J\\010.lab.test."
        let add = try TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
        add.send("server \(settings["DNS_SERVER"]!)\nzone lab.test.\nupdate add \(record)\nsend\n")
        add.closeStdin()
        XCTAssertEqual(add.waitForExit(timeout: 20), 0, add.transcript)
        defer {
            let remove = try? TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
            remove?.send("server \(settings["DNS_SERVER"]!)\nzone lab.test.\nupdate delete \(record)\nsend\n")
            remove?.closeStdin()
            _ = remove?.waitForExit(timeout: 20)
        }
        let listing = try finished(on: "b", ["svc-browse", "--domains"])
        XCTAssertEqual(listing.status, 0, listing.process.transcript)
        let evil = try XCTUnwrap(listing.process.stdout.first { $0.contains("evil") }, listing.process.transcript)
        // DNS's presentation form: \DDD for each byte outside printable ASCII.
        XCTAssertEqual(evil, "browse evil\\027[2J\\010.lab.test. (b._dns-sd._udp.lab.test.)")
        XCTAssertFalse(listing.process.stdout.joined().unicodeScalars.contains { $0.value < 0x20 }, listing.process.transcript)
    }

    func testAPlainBrowseAlsoBrowsesTheNetworksLegacyBrowseDomain() throws {
        let name = TestLAN.uniqueName("legacy")
        let publisher = try publish(name)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        defer {
            publisher.signal(SIGTERM)
            _ = publisher.waitForExit(timeout: 10)
        }
        // b is on the other subnet: only the lb._dns-sd._udp recommendation brings the room.
        let plain = try finished(on: "b", ["svc-browse", "--once", "--json", "--resolve"])
        XCTAssertEqual(plain.status, 0, plain.process.transcript)
        let added = try XCTUnwrap(plain.process.jsonEvents.first { $0["event"] as? String == "added" && $0["name"] as? String == name }, plain.process.transcript)
        XCTAssertEqual(added["domain"] as? String, "lab.test.")
        XCTAssertEqual(added["addresses"] as? [String], ["10.78.1.1", "fd78:1::1"], "the routed IPv4 and IPv6 addresses")
        XCTAssertEqual(plain.process.jsonEvents.last?["event"] as? String, "complete", "the batch completes after the legacy domain was read")

        let linkOnly = try finished(on: "b", ["svc-browse", "--once", "--domain", "local."])
        XCTAssertEqual(linkOnly.status, 0, linkOnly.process.transcript)
        XCTAssertFalse(linkOnly.process.stdout.contains { $0.contains(name) }, "--domain local. browses the link only: \(linkOnly.process.transcript)")

        // Live: the room's withdrawal reaches a plain browse as `removed` in lab.test.
        let live = try TestLAN.run("svc-browse", on: "b", lan: lan, [])
        XCTAssertNotNil(live.waitForLine(timeout: 10) { $0 == "added \"\(name)\" _p2pipp._tcp lab.test." }, live.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
        XCTAssertNotNil(live.waitForLine(timeout: 10) { $0 == "removed \"\(name)\" _p2pipp._tcp lab.test." }, live.transcript)
        live.signal(SIGINT)
        XCTAssertEqual(live.waitForExit(timeout: 10), 0, live.transcript)
    }

    func testAPlainBrowseWithNoRouteToItsDNSServerDoesNotAskIt() throws {
        let name = TestLAN.uniqueName("noroute")
        let publisher = try publish(name)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        defer {
            publisher.signal(SIGTERM)
            _ = publisher.waitForExit(timeout: 10)
        }
        // Without its default route b reaches only its own subnet, not the DNS server 10.78.1.53
        // that its resolv.conf names. The route check's UDP connect fails at once (it sends
        // nothing), and the lookup never starts: its first step, listing the host's subnets
        // for the reverse-zone starting points, would open a netlink socket. The listing is
        // the link's, complete and quiet.
        let gateway = "10.78.2.254"
        XCTAssertEqual(try finished(on: "b", ["ip", "route", "del", "default", "via", gateway]).status, 0)
        defer { _ = try? finished(on: "b", ["ip", "route", "add", "default", "via", gateway]) }
        let traced = try finished(on: "b", ["strace", "-f", "-qq", "-e", "trace=socket,connect,sendto,sendmsg", "-e", "signal=none",
                                            "svc-browse", "--once", "--json"])
        XCTAssertEqual(traced.status, 0, traced.process.transcript)
        XCTAssertEqual(traced.process.jsonEvents.last?["event"] as? String, "complete", traced.process.transcript)
        XCTAssertFalse(traced.process.jsonEvents.contains { $0["name"] as? String == name }, "lab.test. is not browsed: \(traced.process.transcript)")
        let calls = traced.process.stderr
        XCTAssertTrue(calls.contains { $0.contains("connect(") && $0.contains("bus.sock") }, "strace shows the D-Bus connections: \(traced.process.transcript)")
        let toServer = calls.filter { $0.contains("10.78.1.53") }
        XCTAssertEqual(toServer.count, 1, "only the route check: \(traced.process.transcript)")
        XCTAssertTrue(toServer.allSatisfy { $0.contains("connect(") && $0.contains("ENETUNREACH") }, traced.process.transcript)
        XCTAssertFalse(calls.contains { $0.contains("AF_NETLINK") }, "the lookup did not start: \(traced.process.transcript)")

        // With the route back the same browse asks the server and lists the room in lab.test.
        XCTAssertEqual(try finished(on: "b", ["ip", "route", "add", "default", "via", gateway]).status, 0)
        let routed = try finished(on: "b", ["svc-browse", "--once", "--json"])
        XCTAssertEqual(routed.status, 0, routed.process.transcript)
        XCTAssertTrue(routed.process.jsonEvents.contains { $0["name"] as? String == name && $0["domain"] as? String == "lab.test." }, routed.process.transcript)
    }

    func testOnceDoesNotWaitLongForADNSServerThatNeverAnswers() throws {
        // b's DNS server is routed to but its answers never arrive (b drops them), so the
        // legacy browse domains' lookup would run to its 1 s limit. --once waits for it only
        // LegacyBrowseDomains.firstBatchGrace (250 ms) past the link's batch (350 ms at least).
        let rules = "add table inet svc_silent_dns; add chain inet svc_silent_dns in { type filter hook input priority 0; }; "
            + "add rule inet svc_silent_dns in udp sport 53 drop; add rule inet svc_silent_dns in tcp sport 53 drop"
        XCTAssertEqual(try finished(on: "b", ["nft", rules]).status, 0)
        defer { _ = try? finished(on: "b", ["nft", "delete", "table", "inet", "svc_silent_dns"]) }
        // What starting a tool through the LAN's wrapper costs on this machine right now is
        // measured and left out, so that a loaded machine's start-up does not count as waiting.
        let startUp = Date()
        XCTAssertEqual(try finished(on: "b", ["svc-browse", "--version"]).status, 0)
        let startUpTime = Date().timeIntervalSince(startUp)
        let started = Date()
        let listing = try finished(on: "b", ["svc-browse", "--once", "--json"])
        let elapsed = Date().timeIntervalSince(started) - startUpTime
        XCTAssertEqual(listing.status, 0, listing.process.transcript)
        XCTAssertEqual(listing.process.jsonEvents.last?["event"] as? String, "complete", listing.process.transcript)
        XCTAssertLessThan(elapsed, 0.95, "the lookup alone would take 1 s (start-up of \(startUpTime) s left out): \(listing.process.transcript)")
    }

    func testDomainsNamesAServerThatIsNotThere() throws {
        // a (10.78.1.1) runs no DNS server: its kernel refuses the port.
        let listing = try finished(on: "b", ["svc-browse", "--domains", "--dns-server", "10.78.1.1"])
        XCTAssertEqual(listing.status, 69, listing.process.transcript)
        XCTAssertTrue(listing.process.stderr.contains { $0.contains("cannot reach the DNS server 10.78.1.1:53") }, listing.process.transcript)
        let misuse = try finished(on: "b", ["svc-browse", "--domains", "--once"])
        XCTAssertEqual(misuse.status, 64, misuse.process.transcript)
    }
}
