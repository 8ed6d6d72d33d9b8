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
}
