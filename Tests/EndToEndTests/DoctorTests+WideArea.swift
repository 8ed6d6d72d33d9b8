import Foundation
import XCTest

/// svc-doctor's wide-area checks (dns-server, dns-zone, tsig-key, dns-records) on the
/// two-subnet LAN (`TestLAN.wide`), whose BIND serves lab.test. and recommends it.
extension DoctorTests {
    var wide: String { TestLAN.wide }

    func diagnoseWide(_ host: String, _ arguments: [String]) throws -> Report {
        let doctor = try TestLAN.run("svc-doctor", on: host, lan: wide, ["--json", "--timeout", "4"] + arguments)
        let status = doctor.waitForExit(timeout: 40)
        let events = doctor.jsonEvents
        return Report(status: status, checks: events.filter { $0["event"] as? String == "check" },
                      summary: events.first { $0["event"] as? String == "summary" }, transcript: doctor.transcript)
    }

    func wideChecks(_ report: Report) -> [String] {
        report.checks.compactMap { $0["check"] as? String }.filter { $0.hasPrefix("dns-") || $0 == "tsig-key" }
    }

    func soaSerial(on host: String) throws -> String {
        let dig = try TestLAN.command(on: host, lan: wide, ["dig", "+short", "@10.78.1.53", "lab.test.", "SOA"])
        dig.closeStdin()
        XCTAssertEqual(dig.waitForExit(timeout: 10), 0, dig.transcript)
        return dig.stdout.first?.split(separator: " ").dropFirst(2).first.map(String.init) ?? ""
    }

    /// A copy of the LAN's key (or of another key of the same name) with `mode`.
    func keyFile(_ mode: Int, wrongSecret: Bool = false) throws -> String {
        let directory = try XCTUnwrap(FileManager.default.temporaryDirectory.appendingPathComponent("svc-doctor-key-\(UUID().uuidString)"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lab.key").path
        var text = try String(contentsOfFile: try XCTUnwrap(TestLAN.settings(of: "b", lan: wide)["TSIG_KEY"]), encoding: .utf8)
        if wrongSecret {
            let keygen = try TestLAN.command(on: "b", lan: wide, ["tsig-keygen", "-a", "hmac-sha256", "svc-\(wide)"])
            keygen.closeStdin()
            XCTAssertEqual(keygen.waitForExit(timeout: 10), 0, keygen.transcript)
            text = keygen.stdout.joined(separator: "\n") + "\n"
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
        return path
    }

    func testAZoneItsServerAndASignedUpdateThatChangesNothingAreChecked() throws {
        let key = try keyFile(0o600)
        let before = try soaSerial(on: "b")
        let report = try diagnoseWide("b", ["--domain", "lab.test.", "--tsig-key", key])
        XCTAssertEqual(wideChecks(report), ["dns-server", "dns-zone", "tsig-key", "dns-records"], report.transcript)
        XCTAssertEqual(report.status(of: "dns-server"), "ok", report.transcript)
        XCTAssertEqual(report.summary(of: "dns-server"), "10.78.1.53 answers DNS queries", report.transcript)
        XCTAssertEqual(report.status(of: "dns-zone"), "ok", report.transcript)
        XCTAssertEqual(report.status(of: "tsig-key"), "ok", report.transcript)
        XCTAssertEqual(report.summary(of: "tsig-key"), "the key file is yours alone and 10.78.1.53 accepts its signature", report.transcript)
        XCTAssertNotEqual(report.status(of: "dns-records"), "problem", report.transcript)
        XCTAssertEqual(try soaSerial(on: "b"), before, "the signed update changed nothing: the serial stayed")
    }

    func testTheDoctorChecksTheZoneTheNetworkRecommends() throws {
        let name = TestLAN.uniqueName("doctor")
        let settings = try TestLAN.settings(of: "a", lan: wide)
        let publisher = try TestLAN.run("svc-publish", on: "a", lan: wide, ["--name", name, "--domain", "lab.test.", "--dns-server", settings["DNS_SERVER"]!,
                                                                           "--tsig-key", settings["TSIG_KEY"]!, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        defer {
            publisher.signal(SIGTERM)
            _ = publisher.waitForExit(timeout: 10)
        }
        let report = try diagnoseWide("b", [])
        XCTAssertEqual(wideChecks(report), ["dns-server", "dns-zone", "dns-records"], report.transcript)
        XCTAssertEqual(report.status(of: "dns-records"), "ok", report.transcript)
        let observed = report.check("dns-records")["observed"] as? [String] ?? []
        XCTAssertTrue(observed.contains("zone: lab.test. (recommended by b._dns-sd._udp.lab.test.)"), report.transcript)
        XCTAssertTrue(observed.contains("instance: \"\(name)\""), report.transcript)
    }

    func testAKeyOthersMayReadIsAProblemWithItsFix() throws {
        let key = try keyFile(0o644)
        let report = try diagnoseWide("b", ["--domain", "lab.test.", "--tsig-key", key])
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "tsig-key"), "problem", report.transcript)
        XCTAssertEqual(report.fixes(of: "tsig-key").first, "chmod 600 \(key)   (when others may read it)", report.transcript)
    }

    func testAKeyWithAnotherSecretIsABadSignature() throws {
        let key = try keyFile(0o600, wrongSecret: true)
        let report = try diagnoseWide("b", ["--domain", "lab.test.", "--tsig-key", key])
        XCTAssertEqual(report.status(of: "tsig-key"), "problem", report.transcript)
        XCTAssertTrue(report.summary(of: "tsig-key").hasPrefix("10.78.1.53 does not accept this key's signature"), report.transcript)
    }

    func testAZoneTheServerDoesNotServeNamesTheBINDLine() throws {
        let report = try diagnoseWide("b", ["--domain", "nozone.test."])
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(wideChecks(report), ["dns-server", "dns-zone"], report.transcript)
        XCTAssertEqual(report.summary(of: "dns-zone"), "10.78.1.53 does not serve the zone nozone.test.", report.transcript)
        XCTAssertTrue(report.fixes(of: "dns-zone").contains { $0.contains("zone \"nozone.test\" { type primary;") }, report.transcript)
    }

    func testAServerWithNothingOnPort53IsToldFromOneThatCannotBeReached() throws {
        // a (10.78.1.1) is up but runs no DNS server; 10.99.0.1 has no route past the router.
        let refused = try diagnoseWide("b", ["--domain", "lab.test.", "--dns-server", "10.78.1.1"])
        XCTAssertEqual(wideChecks(refused), ["dns-server"], refused.transcript)
        XCTAssertEqual(refused.summary(of: "dns-server"), "10.78.1.1 is reachable but nothing listens on its DNS port (53)", refused.transcript)
        let unreachable = try diagnoseWide("b", ["--domain", "lab.test.", "--dns-server", "10.99.0.1"])
        XCTAssertEqual(unreachable.status(of: "dns-server"), "problem", unreachable.transcript)
        XCTAssertNotEqual(unreachable.summary(of: "dns-server"), refused.summary(of: "dns-server"), unreachable.transcript)
    }

    func testWideAreaUsageErrors() throws {
        for arguments in [["--tsig-key", "/tmp/x"], ["--domain", "local."], ["--domain", "lab.test.", "--dns-server", "nowhere"]] {
            let doctor = try TestLAN.run("svc-doctor", on: "b", lan: wide, arguments)
            XCTAssertEqual(doctor.waitForExit(timeout: 10), 64, doctor.transcript)
        }
    }
}
