import HostDiagnosis
import XCTest

final class ConfigParsingTests: XCTestCase {
    func testAvahiConfigReadsTheSettingsThatMatter() {
        let config = AvahiConfig(parsing: """
            # a comment
            [server]
            host-name = studio
            allow-interfaces=eth0, wlan0 ,
            deny-interfaces=docker0
            use-ipv4=yes
            use-ipv6=no
            ; another comment
            [reflector]
            enable-reflector=yes
            [publish]
            host-name=ignored-outside-server
            """)
        XCTAssertEqual(config.hostName, "studio")
        XCTAssertEqual(config.allowInterfaces, ["eth0", "wlan0"])
        XCTAssertEqual(config.denyInterfaces, ["docker0"])
        XCTAssertTrue(config.useIPv4)
        XCTAssertFalse(config.useIPv6)
        XCTAssertTrue(config.enableReflector)
        XCTAssertTrue(config.malformedLines.isEmpty)
        XCTAssertTrue(config.allows("eth0"))
        XCTAssertFalse(config.allows("docker0"))
        XCTAssertFalse(config.allows("tun0"))
    }

    func testAvahiConfigDefaultsAndBooleansLikeAvahi() {
        let empty = AvahiConfig(parsing: "")
        XCTAssertEqual(empty, AvahiConfig())
        XCTAssertNil(empty.allowInterfaces)
        XCTAssertTrue(empty.useIPv4 && empty.useIPv6)
        XCTAssertFalse(empty.enableReflector)
        XCTAssertTrue(empty.allows("anything"))
        // Avahi's is_yes: y, t or 1 first.
        let config = AvahiConfig(parsing: "[server]\r\nuse-ipv4=True\r\nuse-ipv6=0\r\nallow-point-to-point=1\r\n")
        XCTAssertTrue(config.useIPv4)
        XCTAssertFalse(config.useIPv6)
        XCTAssertTrue(config.allowPointToPoint)
    }

    func testAvahiConfigReportsMalformedLinesAndSurvivesGarbage() {
        let config = AvahiConfig(parsing: "[server\nuse-ipv4\n\u{0}\u{1B}[31m\n[server]\nuse-ipv6=no\n")
        XCTAssertFalse(config.useIPv6)
        XCTAssertEqual(config.malformedLines.count, 3)
        XCTAssertTrue(config.malformedLines[1].hasPrefix("line 2: no '='"))
    }

    func testOversizedInputIsBounded() {
        let longLine = "[server]\nhost-name=" + String(repeating: "x", count: 100_000) + "\nuse-ipv4=no\n"
        let config = AvahiConfig(parsing: longLine)
        XCTAssertNil(config.hostName, "a line longer than the bound is skipped")
        XCTAssertFalse(config.useIPv4, "the lines after it still count")

        let manyLines = "[server]\n" + String(repeating: "# filler\n", count: ConfigText.maximumLines) + "use-ipv4=no\n"
        XCTAssertTrue(AvahiConfig(parsing: manyLines).useIPv4, "lines past the bound are ignored")
        let noise = String(repeating: "garbage\n", count: 50_000)
        XCTAssertEqual(AvahiConfig(parsing: noise).malformedLines.count, 20, "malformed lines are reported, boundedly")
    }

    func testNSSHostsLine() throws {
        let hosts = try XCTUnwrap(NSSHosts(parsing: """
            passwd: files
            # hosts: files mdns
            hosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname # trailing
            hosts: files
            """))
        XCTAssertEqual(hosts.sources, ["files", "mdns4_minimal", "dns", "myhostname"])
        XCTAssertEqual(hosts.mdnsSources, ["mdns4_minimal"])
        XCTAssertEqual(try XCTUnwrap(NSSHosts(parsing: "hosts: files dns")).mdnsSources, [])
        XCTAssertEqual(try XCTUnwrap(NSSHosts(parsing: "hosts: files [ SUCCESS=return mdns ] dns\n")).sources, ["files", "dns"])
        XCTAssertNil(NSSHosts(parsing: "passwd: files\n\u{0}\u{FFFF}"))
        XCTAssertNil(NSSHosts(parsing: "hosts: " + String(repeating: "mdns ", count: 10_000)), "an oversized line is skipped")
    }

    func testProcessStatusUID() {
        XCTAssertEqual(ProcessStatus.realUID(in: "Name:\tavahi-daemon\nUid:\t104\t104\t104\t104\nGid:\t112\n"), 104)
        XCTAssertNil(ProcessStatus.realUID(in: "Name:\tx\nUid:\tnope\n"))
        XCTAssertNil(ProcessStatus.realUID(in: ""))
    }

    func testResolvedMulticastDNSLastSettingWins() {
        let config = ResolvedConfig(files: [
            ("/etc/systemd/resolved.conf", "[Resolve]\n#MulticastDNS=yes\nMulticastDNS=yes\n"),
            ("/etc/systemd/resolved.conf.d/a.conf", "[Other]\nMulticastDNS=no\n[Resolve]\nMulticastDNS=bogus\n"),
            ("/etc/systemd/resolved.conf.d/b.conf", "[Resolve]\nMulticastDNS = false\n"),
        ])
        XCTAssertEqual(config.multicastDNS, .no)
        XCTAssertEqual(config.source, "/etc/systemd/resolved.conf.d/b.conf line 2")
        XCTAssertNil(ResolvedConfig(files: []).multicastDNS)
        XCTAssertEqual(ResolvedConfig(files: [("f", "[Resolve]\nMulticastDNS=resolve")]).multicastDNS, .resolve)
    }

    func testProcNetUDPLines() throws {
        let table = """
               sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
            15509: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6316482 2 000000006b314823 0
            15510: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 111 2 000000006b314823 0
            15511: 0100000A:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 99
              12: ZZZZZZZZ:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 5 2 0 0
              13: 00000000:FFFFF 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 5 2 0 0
            """
        let sockets = UDPSocketEntry.sockets(boundTo: 5353, in: table)
        XCTAssertEqual(sockets.map(\.inode), [6316482, 99])
        XCTAssertEqual(sockets.map(\.uid), [0, 0])
        XCTAssertEqual(sockets.map(\.address.description), ["0.0.0.0", "10.0.0.1"])
        let v6 = try XCTUnwrap(UDPSocketEntry(line: "  0: 000080FE00000000FF007700770000FE:14E9 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 42 2 0 0"))
        XCTAssertEqual(v6.address.description, "fe80::77:ff:fe00:77")
        XCTAssertEqual(v6.port, 5353)
        XCTAssertTrue(UDPSocketEntry.sockets(boundTo: 5353, in: String(repeating: "\u{0}", count: 100_000)).isEmpty)
    }
}
