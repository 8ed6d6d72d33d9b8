import Foundation
import XCTest

/// The two-subnet virtual network itself (`Scripts/lan up --subnets`): hosts on either side of
/// a router, and a BIND server that takes DNS UPDATEs signed with the LAN's TSIG key only.
final class TwoSubnetLANTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// Runs a command on a host of the two-subnet LAN and returns its exit status and output.
    private func run(on host: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32?, process: ToolProcess) {
        let process = try TestLAN.command(on: host, lan: TestLAN.wide, arguments)
        if let input { process.send(input) }
        process.closeStdin()
        return (process.waitForExit(timeout: 20), process)
    }

    func testHostsSitOnTwoSubnetsAndNameTheDNSHost() throws {
        let a = try TestLAN.settings(of: "a", lan: TestLAN.wide)
        let b = try TestLAN.settings(of: "b", lan: TestLAN.wide)
        XCTAssertEqual(a["IPV4"], "10.78.1.1")
        XCTAssertEqual(b["IPV4"], "10.78.2.2")
        XCTAssertEqual(a["SUBNET"], "1")
        XCTAssertEqual(b["SUBNET"], "2")
        XCTAssertEqual(b["DNS_SERVER"], "10.78.1.53")
        XCTAssertEqual(b["DNS_ZONE"], "lab.test.")
        let key = try XCTUnwrap(b["TSIG_KEY"])
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600, "the TSIG key file must be readable by its owner only")
        let resolv = try run(on: "b", ["cat", "/etc/resolv.conf"])
        // The search domain is where RFC 6763 section 11 asks for browse domains first.
        XCTAssertEqual(resolv.process.stdout, ["search lab.test", "nameserver 10.78.1.53"], resolv.process.transcript)
    }

    func testSignedUpdateFromTheOtherSubnetIsServedAndUnsignedIsRefused() throws {
        let b = try TestLAN.settings(of: "b", lan: TestLAN.wide)
        let server = try XCTUnwrap(b["DNS_SERVER"])
        let key = try XCTUnwrap(b["TSIG_KEY"])
        let label = "lan-check-\(UInt32.random(in: 1000...9999))"
        let name = "\(label).lab.test."
        let add = "server \(server)\nzone lab.test.\nupdate add \(name) 30 IN TXT \"from-b\"\nsend\n"
        let signed = try run(on: "b", ["nsupdate", "-k", key], input: add)
        XCTAssertEqual(signed.status, 0, signed.process.transcript)

        // Seen from the DNS host's subnet (a) and through the resolv.conf nameserver.
        let seen = try run(on: "a", ["dig", "+short", name, "TXT"])
        XCTAssertEqual(seen.process.stdout, ["\"from-b\""], seen.process.transcript)

        let unsigned = try run(on: "b", ["nsupdate"], input: add.replacingOccurrences(of: "from-b", with: "forged"))
        XCTAssertNotEqual(unsigned.status, 0, unsigned.process.transcript)
        XCTAssertTrue(unsigned.process.stderr.contains { $0.contains("REFUSED") }, unsigned.process.transcript)

        let delete = "server \(server)\nzone lab.test.\nupdate delete \(name) TXT\nsend\n"
        XCTAssertEqual(try run(on: "b", ["nsupdate", "-k", key], input: delete).status, 0)
        let gone = try run(on: "a", ["dig", "+short", "@\(server)", name, "TXT"])
        XCTAssertEqual(gone.process.stdout, [], gone.process.transcript)
    }

    func testMulticastDNSStaysOnItsSubnet() throws {
        // a's daemon announces itself over mDNS; b, behind the router, must not hear it.
        // (avahi-resolve exits 0 either way: what it prints tells.)
        let far = try run(on: "b", ["avahi-resolve", "-4", "-n", "\(TestLAN.wide)-a.local"])
        XCTAssertEqual(far.process.stdout, [], far.process.transcript)
        XCTAssertTrue(far.process.stderr.contains { $0.contains("Failed to resolve") }, far.process.transcript)
        let near = try run(on: "a", ["avahi-resolve", "-4", "-n", "\(TestLAN.wide)-a.local"])
        XCTAssertEqual(near.process.stdout, ["\(TestLAN.wide)-a.local\t10.78.1.1"], near.process.transcript)
    }
}
