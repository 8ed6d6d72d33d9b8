import TransportCore
import XCTest

final class IPAddressTests: XCTestCase {
    func v6(_ groups: [UInt16]) -> IPAddress {
        IPAddress(bytes: groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })!
    }

    func testFormatsIPv6PerRFC5952() {
        XCTAssertEqual(v6([0xfe80, 0, 0, 0, 0x77, 0xff, 0xfe00, 1]).description, "fe80::77:ff:fe00:1")
        XCTAssertEqual(v6([0, 0, 0, 0, 0, 0, 0, 1]).description, "::1")
        XCTAssertEqual(v6([0, 0, 0, 0, 0, 0, 0, 0]).description, "::")
        XCTAssertEqual(v6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]).description, "2001:db8::1:0:0:1", "the first of equal runs")
        XCTAssertEqual(v6([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1]).description, "2001:db8:0:1:1:1:1:1", "a single zero group stays")
        XCTAssertEqual(v6([0x2001, 0xdb8, 0, 0, 0, 1, 0, 0]).description, "2001:db8::1:0:0", "the longest run wins")
        XCTAssertEqual(v6([1, 0, 0, 0, 0, 0, 0, 0]).description, "1::")
    }

    func testFormatsIPv4AndMappedAddresses() {
        XCTAssertEqual(IPAddress(bytes: [10, 77, 0, 1])!.description, "10.77.0.1")
        let mapped = IPAddress(bytes: Array(repeating: 0, count: 10) + [0xFF, 0xFF, 10, 77, 0, 2])!
        XCTAssertEqual(mapped.unmappedIPv4?.description, "10.77.0.2")
        XCTAssertEqual(SocketEndpoint(address: mapped, port: 80).description, "10.77.0.2:80")
    }

    func testRejectsWrongLengths() {
        XCTAssertNil(IPAddress(bytes: [1, 2, 3]))
        XCTAssertNil(IPAddress(bytes: Array(repeating: 0, count: 17)))
    }

    func testLinkLocalAndScopes() {
        let linkLocal = v6([0xfe80, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertTrue(linkLocal.isLinkLocal)
        XCTAssertFalse(v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]).isLinkLocal)
        let endpoint = SocketEndpoint(address: linkLocal, port: 4242, scopeID: 7, scopeName: "veth0")
        XCTAssertEqual(endpoint.description, "[fe80::1%veth0]:4242")
        XCTAssertEqual(endpoint.addressWithScope, "fe80::1%veth0")
        XCTAssertEqual(SocketEndpoint(address: linkLocal, port: 1, scopeID: 7).description, "[fe80::1%7]:1")
        XCTAssertEqual(SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: 9).description, "127.0.0.1:9")
    }

    func testAddressesNoAnnouncedServiceCanHave() {
        func reason(_ bytes: [UInt8]) -> String? { IPAddress(bytes: bytes)!.unsuitableForAnnouncedService }
        XCTAssertEqual(reason([127, 0, 0, 1]), "a loopback address")
        XCTAssertEqual(reason([0, 0, 0, 0]), "an unspecified address")
        XCTAssertEqual(reason([224, 0, 0, 251]), "a multicast address")
        XCTAssertEqual(reason([255, 255, 255, 255]), "the broadcast address")
        XCTAssertEqual(reason(Array(repeating: 0, count: 15) + [1]), "a loopback address")
        XCTAssertEqual(reason(Array(repeating: 0, count: 16)), "an unspecified address")
        XCTAssertEqual(reason([0xFF, 0x02] + Array(repeating: 0, count: 13) + [0xFB]), "a multicast address")
        XCTAssertEqual(reason(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 1]), "a loopback address", "IPv4-mapped")
        XCTAssertNil(reason([10, 77, 0, 1]))
        XCTAssertNil(reason([192, 168, 1, 255]), "a subnet's broadcast address is not known here; connecting to it fails by itself")
        XCTAssertNil(reason([0xFE, 0x80] + Array(repeating: 0, count: 13) + [1]))
    }

    func testHostsAreCountedByIPv4AddressOrIPv6Slash64() {
        func host(_ bytes: [UInt8], scope: UInt32 = 0, name: String? = nil) -> String {
            SocketEndpoint(address: IPAddress(bytes: bytes)!, port: 7000, scopeID: scope, scopeName: name).hostKey
        }
        XCTAssertEqual(host([10, 77, 0, 2]), "10.77.0.2")
        XCTAssertEqual(host(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 10, 77, 0, 2]), "10.77.0.2")
        XCTAssertEqual(host([0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8]), "2001:db8:0:7::/64")
        XCTAssertEqual(host([0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 7, 9, 9, 9, 9, 9, 9, 9, 9]), "2001:db8:0:7::/64")
        XCTAssertEqual(host([0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]), "2001:db8:0:8::/64")
    }

    /// Issue 13 review: one machine took 120 fe80:: aliases and was counted as 120 hosts.
    /// Room-code guesses count a link-local peer by what the neighbour table says (see
    /// `NeighbourAttributionTests`), per interface.
    func testLinkLocalGuessesOfOneMachineAreOneHost() {
        func host(_ bytes: [UInt8], scope: UInt32 = 0, name: String? = nil, hardware: [UInt8]) -> String {
            SocketEndpoint(address: IPAddress(bytes: bytes)!, port: 7000, scopeID: scope, scopeName: name).codeHostKey(.hardware(hardware))
        }
        let machine: [UInt8] = [0x02, 0x77, 0, 0, 0, 0x03]
        let aliases = (1...120).map { host([0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B, 0xAD, 0, UInt8($0)], scope: 3, name: "veth0", hardware: machine) }
        XCTAssertEqual(Set(aliases), ["fe80::/10%veth0 02:77:00:00:00:03"], "one machine's aliases are one host")
        XCTAssertEqual(host([0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x77, 0, 0xFF, 0xFE, 0, 0, 2], scope: 3, name: "veth0", hardware: [0x02, 0x77, 0, 0, 0, 0x02]),
                       "fe80::/10%veth0 02:77:00:00:00:02", "another machine on the link is another host")
        XCTAssertEqual(host([0xFE, 0xBF, 9, 9, 9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8], scope: 3, name: "veth0", hardware: machine),
                       "fe80::/10%veth0 02:77:00:00:00:03", "all of fe80::/10")
        XCTAssertEqual(host([0xFE, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8], scope: 4, name: "veth1", hardware: machine),
                       "fe80::/10%veth1 02:77:00:00:00:03", "another interface is another link")
        XCTAssertEqual(host([0xFE, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8], scope: 4, hardware: machine), "fe80::/10%4 02:77:00:00:00:03",
                       "no name: the index")
        XCTAssertEqual(host(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 169, 254, 3, 3], hardware: machine), "169.254.0.0/16 02:77:00:00:00:03",
                       "IPv4-mapped")
        XCTAssertEqual(host([169, 253, 1, 2], hardware: machine), "169.253.1.2", "not link-local")
    }

    /// Limits other than room-code guesses need no lookup: a link-local address counts alone.
    func testOtherLimitsCountALinkLocalAddressAlone() {
        func host(_ bytes: [UInt8]) -> String { SocketEndpoint(address: IPAddress(bytes: bytes)!, port: 7000, scopeID: 3, scopeName: "veth0").hostKey }
        XCTAssertEqual(host([0xFE, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]), "fe80::102:304:506:708")
        XCTAssertEqual(host([169, 254, 1, 2]), "169.254.1.2")
    }
}
