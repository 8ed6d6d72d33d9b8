import TransportCore
import XCTest

/// The netlink request for one neighbour entry that tells link-local peers apart by hardware
/// address, and a decoder that takes only what its lengths allow.
final class NeighbourQueryTests: XCTestCase {
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16) }

    func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        let bytes = le16(4 + value.count) + le16(type) + value
        return bytes + Array(repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    /// One RTM_NEWNEIGH message (type 28) in state `state`.
    func neighbour(family: UInt8, interface: Int, state: Int = 0x02, _ attributes: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [family, 0, 0, 0] + le32(interface) + le16(state) + [0, 0] + attributes
        return le32(16 + body.count) + le16(28) + le16(0) + le32(1) + le32(0) + body
    }

    /// NDA_CACHEINFO: confirmed, used, updated, refcnt (ticks ago).
    func cacheInfo(updated: Int) -> [UInt8] { attribute(3, le32(10) + le32(20) + le32(updated) + le32(1)) }

    let linkLocal: [UInt8] = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B, 0xAD, 0, 5]
    let hardware: [UInt8] = [0x02, 0x77, 0, 0, 0, 3]

    func testTheRequestAsksForOneAddressOnOneInterfaceNotADump() {
        let address = IPAddress(bytes: linkLocal)!
        let request = NeighbourQuery.request(address: address, interfaceIndex: 3, sequence: 7)
        XCTAssertEqual(request.count, 16 + 12 + 20)
        XCTAssertEqual(Array(request[0..<4]), le32(48))
        XCTAssertEqual(Array(request[4..<6]), le16(30), "RTM_GETNEIGH")
        XCTAssertEqual(Array(request[6..<8]), le16(0x1), "NLM_F_REQUEST alone: no NLM_F_DUMP")
        XCTAssertEqual(Array(request[8..<12]), le32(7))
        XCTAssertEqual(request[16], 10, "AF_INET6")
        XCTAssertEqual(Array(request[20..<24]), le32(3), "ndm_ifindex")
        XCTAssertEqual(Array(request[24..<28]), [0, 0, 0, 0], "state, flags and type stay 0 (the kernel refuses others)")
        XCTAssertEqual(Array(request[28...]), le16(20) + le16(1) + linkLocal, "NDA_DST")
        let v4 = NeighbourQuery.request(address: IPAddress(bytes: [169, 254, 1, 2])!, interfaceIndex: 2, sequence: 1)
        XCTAssertEqual(v4[16], 2, "AF_INET")
        XCTAssertEqual(Array(v4[28...]), le16(8) + le16(1) + [169, 254, 1, 2])
    }

    func testDecodesTheEntryItsStateAndTheAgeOfItsLastChange() {
        let answer = NeighbourQuery.decode(neighbour(family: 10, interface: 3, state: 0x04,
                                                     attribute(1, linkLocal) + attribute(9, [1, 2, 3, 4]) + attribute(2, hardware) + cacheInfo(updated: 1234)))
        XCTAssertEqual(answer, .entry(.init(interfaceIndex: 3, address: IPAddress(bytes: linkLocal)!, state: 0x04, linkLayerAddress: hardware,
                                            updatedTicksAgo: 1234)))
        guard case .entry(let incomplete)? = NeighbourQuery.decode(neighbour(family: 10, interface: 3, state: 0x01, attribute(1, linkLocal))) else {
            return XCTFail("an incomplete entry is still an answer")
        }
        XCTAssertNil(incomplete.linkLayerAddress)
        XCTAssertNil(incomplete.updatedTicksAgo)
        XCTAssertFalse(incomplete.isValid, "NUD_INCOMPLETE")
        for state in [0x02, 0x04, 0x08, 0x10, 0x40, 0x80] {
            XCTAssertTrue(NeighbourQuery.Entry(interfaceIndex: 1, address: IPAddress(bytes: linkLocal)!, state: UInt16(state),
                                               linkLayerAddress: hardware, updatedTicksAgo: 0).isValid, "state \(state)")
        }
        guard case .entry(let short)? = NeighbourQuery.decode(neighbour(family: 10, interface: 3, attribute(1, linkLocal) + attribute(3, le32(1) + le32(2)))) else {
            return XCTFail("a short cache info is ignored, not the entry")
        }
        XCTAssertNil(short.updatedTicksAgo)
    }

    func testDecodesTheKernelsError() {
        let noEntry = le32(36) + le16(2) + le16(0) + le32(1) + le32(0) + le32(-2 & 0xFFFF_FFFF) + Array(repeating: 0, count: 16)
        XCTAssertEqual(NeighbourQuery.decode(noEntry), .failed(errno: 2), "ENOENT")
        XCTAssertNil(NeighbourQuery.decode(Array(noEntry[..<18])))
        let smallest = le32(20) + le16(2) + le16(0) + le32(1) + le32(0) + le32(Int(UInt32(bitPattern: Int32.min)))
        XCTAssertEqual(NeighbourQuery.decode(smallest), .failed(errno: Int32.max), "no overflow negating the smallest int")
    }

    func testMalformedLengthsDecodeToNilWithoutReadingPastTheBytes() {
        let good = neighbour(family: 10, interface: 3, attribute(1, linkLocal) + attribute(2, hardware) + cacheInfo(updated: 5))
        XCTAssertNotNil(NeighbourQuery.decode(good))
        var overlong = good
        overlong[0] = 0xFF
        XCTAssertNil(NeighbourQuery.decode(overlong))
        var attributeTooLong = good
        attributeTooLong[16 + 12] = 0xF0
        XCTAssertNil(NeighbourQuery.decode(attributeTooLong))
        var wrongFamily = good
        wrongFamily[16] = 2
        XCTAssertNil(NeighbourQuery.decode(wrongFamily), "an IPv6 destination in an AF_INET entry")
        XCTAssertNil(NeighbourQuery.decode(neighbour(family: 10, interface: 3, attribute(2, hardware))), "no destination")
        for cut in 0..<good.count { XCTAssertNil(NeighbourQuery.decode(Array(good[..<cut]))) }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let noise = (0..<Int.random(in: 0..<200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = NeighbourQuery.decode(good + noise)
            _ = NeighbourQuery.decode(noise)
        }
    }
}
