import HostDiagnosis
import XCTest

/// The wide-area checks as functions of what the probe saw.
final class ZoneCheckTests: XCTestCase {
    func facts(_ answer: ZoneFacts.ServerAnswer, zone: ZoneFacts.ZoneAnswer? = nil, key: ZoneFacts.KeyState? = nil,
               records: ZoneFacts.Records? = nil) -> ZoneFacts {
        ZoneFacts(zone: "lab.test.", server: "10.78.1.53", serverSource: "/etc/resolv.conf", type: "_p2pipp._tcp", serverAnswer: answer,
                  zoneAnswer: zone, key: key, keyPath: key == nil ? nil : "/home/u/lab.key", records: records)
    }

    func testAHealthyZoneIsFourOkChecks() {
        let findings = Finding.zone(facts(.answered, zone: .served(serial: 7), key: .accepted("svc-lab."), records: .listed(count: 2, names: ["A", "B"])))
        XCTAssertEqual(findings.map(\.check), ["dns-server", "dns-zone", "tsig-key", "dns-records"])
        XCTAssertEqual(findings.map(\.status), [.ok, .ok, .ok, .ok])
        XCTAssertEqual(findings.last?.summary, "2 _p2pipp._tcp services are registered in lab.test.")
        XCTAssertTrue(findings[1].observed.contains("SOA serial: 7"))
    }

    func testServerFailuresAreToldApartAndStopTheOtherChecks() {
        let refused = Finding.zone(facts(.connectionRefused("x")))
        let unreachable = Finding.zone(facts(.unreachable("x")))
        let timeout = Finding.zone(facts(.timeout("x")))
        for findings in [refused, unreachable, timeout] {
            XCTAssertEqual(findings.map(\.check), ["dns-server"])
            XCTAssertEqual(findings.first?.status, .problem)
        }
        XCTAssertEqual(Set([refused, unreachable, timeout].compactMap { $0.first?.summary }).count, 3, "three causes, three verdicts")
        XCTAssertTrue(refused[0].fixes.contains { $0.contains("listen-on port 53 { 10.78.1.53; };") })
        XCTAssertTrue(timeout[0].fixes.contains { $0.contains("allow-query") })
        XCTAssertTrue(refused[0].fixes.contains { $0.contains("/etc/resolv.conf") })
    }

    func testNoServerConfiguredSaysWhereToGiveOne() {
        let findings = Finding.zone(ZoneFacts(zone: "lab.test.", server: "none", serverSource: "/etc/resolv.conf", type: "_p2pipp._tcp",
                                              serverAnswer: .notConfigured("/etc/resolv.conf names no DNS server")))
        XCTAssertEqual(findings.map(\.check), ["dns-server"])
        XCTAssertEqual(findings[0].summary, "no DNS server is configured for lab.test.")
        XCTAssertEqual(findings[0].fixes.last, "or add the line 'nameserver ADDRESS' to /etc/resolv.conf")
    }

    func testAZoneNotServedNamesTheBINDZoneStatement() {
        let findings = Finding.zone(facts(.answered, zone: .notServed("REFUSED"), key: .accepted("k."), records: .listed(count: 0, names: [])))
        XCTAssertEqual(findings.map(\.check), ["dns-server", "dns-zone"])
        XCTAssertEqual(findings[1].status, .problem)
        XCTAssertTrue(findings[1].fixes.contains { $0.contains("zone \"lab.test\" { type primary;") && $0.contains("update-policy { grant KEY-NAME zonesub ANY; }") })
        XCTAssertTrue(findings[1].observed.contains("SOA query: REFUSED"))
    }

    func testKeyProblemsSayWhatToDo() {
        let unusable = Finding.zone(facts(.answered, zone: .served(serial: 1), key: .unusable("mode 644"), records: .listed(count: 0, names: [])))[2]
        XCTAssertEqual(unusable.status, .problem)
        XCTAssertEqual(unusable.fixes.first, "chmod 600 /home/u/lab.key   (when others may read it)")
        let refused = Finding.zone(facts(.answered, zone: .served(serial: 1), key: .refused("REFUSED"), records: .listed(count: 0, names: [])))[2]
        XCTAssertTrue(refused.fixes.first?.contains("update-policy { grant KEY-NAME zonesub ANY; }") ?? false)
        let bad = Finding.zone(facts(.answered, zone: .served(serial: 1), key: .badSignature("BADSIG"), records: .listed(count: 0, names: [])))[2]
        XCTAssertTrue(bad.fixes.contains("check this host's clock:   timedatectl"))
    }

    func testNoServicesIsAWarningWithThePublishCommand() {
        let findings = Finding.zone(facts(.answered, zone: .served(serial: 1), records: .listed(count: 0, names: [])))
        XCTAssertEqual(findings.map(\.check), ["dns-server", "dns-zone", "dns-records"], "no key given: no key check")
        XCTAssertEqual(findings[2].status, .warning)
        XCTAssertEqual(findings[2].fixes, ["svc-publish --domain lab.test. --dns-server 10.78.1.53 --tsig-key KEY-FILE   (on the host that hosts the room)"])
        let many = Finding.zone(facts(.answered, zone: .served(serial: 1), records: .listed(count: 9, names: ["a", "b", "c", "d", "e"])))[2]
        XCTAssertEqual(many.observed.suffix(6), ["instance: \"a\"", "instance: \"b\"", "instance: \"c\"", "instance: \"d\"", "instance: \"e\"", "and 4 more"])
    }
}
