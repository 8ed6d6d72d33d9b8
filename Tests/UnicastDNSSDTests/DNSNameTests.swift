import UnicastDNSSD
import XCTest

final class DNSNameTests: XCTestCase {
    func testDottedWireAndBack() throws {
        let zone = try DNSName(dotted: "lab.test.")
        XCTAssertEqual(zone.wire, [3, 108, 97, 98, 4, 116, 101, 115, 116, 0])
        XCTAssertEqual(DNSName(wire: zone.wire), zone)
        XCTAssertEqual(try DNSName(dotted: "lab.test"), zone)
        XCTAssertEqual(zone.description, "lab.test.")
    }

    /// `local.` and every name under it belong to multicast DNS, in any case.
    func testLinkLocalNames() throws {
        for name in ["local.", "foo.local.", "a.b.LOCAL."] { XCTAssertTrue(try DNSName(dotted: name).isLinkLocal, name) }
        for name in ["lab.test.", "local.lab.test.", "localhost.", "."] { XCTAssertFalse(try DNSName(dotted: name).isLinkLocal, name) }
    }

    func testInstanceLabelKeepsDotsAndSpaces() throws {
        let name = try DNSName(dotted: "_p2pipp._tcp.lab.test").prepending(Array("Team room. 2".utf8))
        XCTAssertEqual(name.labels.count, 5)
        XCTAssertEqual(name.description, "Team\\032room\\.\\0322._p2pipp._tcp.lab.test.")
        XCTAssertTrue(name.isWithin(try DNSName(dotted: "LAB.test")))
        XCTAssertFalse(name.isWithin(try DNSName(dotted: "other.test")))
    }

    func testLimits() throws {
        XCTAssertThrowsError(try DNSName(dotted: "a..b"))
        XCTAssertThrowsError(try DNSName(dotted: "a\\.b"))
        XCTAssertThrowsError(try DNSName(labels: [Array(repeating: 0x61, count: 64)]))
        XCTAssertNoThrow(try DNSName(labels: [Array(repeating: 0x61, count: 63)]))
        // 4 labels of 63 bytes: 4 * 64 + 1 = 257 bytes on the wire.
        XCTAssertThrowsError(try DNSName(labels: Array(repeating: Array(repeating: 0x61, count: 63), count: 4))) { error in
            XCTAssertEqual((error as! UnicastDNSSDError).code, .invalidName)
        }
    }

    func testHostileWireIsRejected() {
        XCTAssertNil(DNSName(wire: []))
        XCTAssertNil(DNSName(wire: [3, 97, 98]))            // label past the end
        XCTAssertNil(DNSName(wire: [1, 97]))                // no root
        XCTAssertNil(DNSName(wire: [0xC0, 12]))             // compression pointer
        XCTAssertNil(DNSName(wire: [1, 97, 0, 0]))          // bytes after the root
        XCTAssertNil(DNSName(wire: Array(repeating: 1, count: 300)))
        XCTAssertEqual(DNSName(wire: [0])?.labels, [])
    }
}
