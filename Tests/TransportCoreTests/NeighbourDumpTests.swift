import TransportCore
import XCTest

/// The netlink neighbour dump that tells link-local peers apart by hardware address: its
/// request, and a decoder that takes only what its lengths allow.
final class NeighbourDumpTests: XCTestCase {
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16) }

    func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        let bytes = le16(4 + value.count) + le16(type) + value
        return bytes + Array(repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    /// One RTM_NEWNEIGH message (type 28).
    func neighbour(family: UInt8, interface: Int, _ attributes: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [family, 0, 0, 0] + le32(interface) + [0x02, 0, 0, 0] + attributes
        return le32(16 + body.count) + le16(28) + le16(2) + le32(1) + le32(0) + body
    }

    let linkLocal: [UInt8] = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B, 0xAD, 0, 5]
    let hardware: [UInt8] = [0x02, 0x77, 0, 0, 0, 3]

    func testTheRequestAsksTheKernelForAWholeFamily() {
        let request = NeighbourDump.request(family: .ipv6, sequence: 7)
        XCTAssertEqual(request.count, 28)
        XCTAssertEqual(Array(request[0..<4]), le32(28))
        XCTAssertEqual(Array(request[4..<6]), le16(30), "RTM_GETNEIGH")
        XCTAssertEqual(Array(request[6..<8]), le16(0x301), "NLM_F_REQUEST | NLM_F_DUMP")
        XCTAssertEqual(Array(request[8..<12]), le32(7))
        XCTAssertEqual(request[16], 10, "AF_INET6")
        XCTAssertEqual(NeighbourDump.request(family: .ipv4, sequence: 1)[16], 2, "AF_INET")
    }

    func testDecodesEntriesAndTheEndOfTheDump() {
        let one = neighbour(family: 10, interface: 3, attribute(1, linkLocal) + attribute(9, [1, 2, 3, 4]) + attribute(2, hardware))
        let incomplete = neighbour(family: 10, interface: 3, attribute(1, linkLocal))
        let v4 = neighbour(family: 2, interface: 3, attribute(1, [169, 254, 1, 2]) + attribute(2, hardware))
        let done = le32(20) + le16(3) + le16(2) + le32(1) + le32(0) + le32(0)
        let batch = NeighbourDump.decode(one + incomplete + v4 + done)
        XCTAssertTrue(batch.isDone)
        XCTAssertEqual(batch.entries.map(\.address.description), ["fe80::bad:5", "169.254.1.2"], "an entry without a hardware address is skipped")
        XCTAssertEqual(batch.entries.first?.linkLayerAddress, hardware)
        XCTAssertEqual(batch.entries.first?.interfaceIndex, 3)
        XCTAssertFalse(NeighbourDump.decode(one).isDone, "more reads follow until NLMSG_DONE")
    }

    func testMalformedLengthsEndTheDecodingWithoutReadingPastTheBytes() {
        let good = neighbour(family: 10, interface: 3, attribute(1, linkLocal) + attribute(2, hardware))
        var overlong = good
        overlong[0] = 0xFF
        XCTAssertEqual(NeighbourDump.decode(overlong).entries, [])
        var attributeTooLong = good
        attributeTooLong[16 + 12] = 0xF0
        XCTAssertEqual(NeighbourDump.decode(attributeTooLong).entries, [])
        var wrongFamily = good
        wrongFamily[16] = 2
        XCTAssertEqual(NeighbourDump.decode(wrongFamily).entries, [], "an IPv6 destination in an AF_INET entry")
        for cut in 0..<good.count { _ = NeighbourDump.decode(Array(good[..<cut])) }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let noise = (0..<Int.random(in: 0..<200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = NeighbourDump.decode(good + noise)
            _ = NeighbourDump.decode(noise)
        }
    }
}
