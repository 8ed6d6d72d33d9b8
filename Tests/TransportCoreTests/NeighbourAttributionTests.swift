import TransportCore
import XCTest

/// Review attacks14a F1: a machine on the link wrote the room's entry for its own alias as
/// another machine's hardware address while it connected, and its guesses were charged to that
/// machine. A hardware address now counts only when the entry stood through the connection.
final class NeighbourAttributionTests: XCTestCase {
    let address = IPAddress(bytes: [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xDE, 0xAD, 0, 1])!
    let victim: [UInt8] = [0x02, 0x77, 0, 0, 0, 2]

    func entry(state: UInt16 = 0x02, hardware: [UInt8]? = [0x02, 0x77, 0, 0, 0, 2], ticksAgo: UInt32?) -> NeighbourQuery.Entry {
        NeighbourQuery.Entry(interfaceIndex: 3, address: address, state: state, linkLayerAddress: hardware, updatedTicksAgo: ticksAgo)
    }

    func decide(_ entry: NeighbourQuery.Entry?, connectedFor age: Duration) -> NeighbourAttribution {
        NeighbourAttribution.decide(entry: entry, connectionAge: age, ticksPerSecond: 100)
    }

    func testAnEntryOlderThanTheConnectionCountsByItsHardwareAddress() {
        XCTAssertEqual(decide(entry(ticksAgo: 3000), connectedFor: .milliseconds(80)), .hardware(victim))
        XCTAssertEqual(decide(entry(state: 0x04, ticksAgo: 9), connectedFor: .milliseconds(80)), .hardware(victim), "stale, 90 ms")
    }

    func testAnEntryChangedJustBeforeTheAcceptPassesDespiteTheKernelsRounding() {
        // Changed 0.5 ms before an accept 80 ms ago: 80.5 ms, which the kernel reports as 8 ticks.
        XCTAssertEqual(decide(entry(state: 0x08, ticksAgo: 8), connectedFor: .milliseconds(80)), .hardware(victim))
        XCTAssertEqual(decide(entry(ticksAgo: 7), connectedFor: .milliseconds(80)), .hardware(victim), "70 ms + a tick and a jiffy of margin")
    }

    func testAnEntryChangedDuringTheConnectionIsUnsettled() {
        // The attack: the entry is flipped to the victim 40 ms into an 80 ms-old connection.
        XCTAssertEqual(decide(entry(ticksAgo: 4), connectedFor: .milliseconds(80)), .unsettled)
        XCTAssertEqual(decide(entry(ticksAgo: 0), connectedFor: .seconds(2)), .unsettled)
        XCTAssertEqual(decide(entry(ticksAgo: 100), connectedFor: .milliseconds(1015)), .unsettled, "just past the margin")
    }

    func testAnEntryWithoutAUsableHardwareAddressIsUnsettled() {
        XCTAssertEqual(decide(nil, connectedFor: .milliseconds(50)), .unsettled, "no entry")
        XCTAssertEqual(decide(entry(state: 0x01, ticksAgo: 3000), connectedFor: .milliseconds(50)), .unsettled, "incomplete")
        XCTAssertEqual(decide(entry(state: 0x20, ticksAgo: 3000), connectedFor: .milliseconds(50)), .unsettled, "failed")
        XCTAssertEqual(decide(entry(hardware: nil, ticksAgo: 3000), connectedFor: .milliseconds(50)), .unsettled)
        XCTAssertEqual(decide(entry(ticksAgo: nil), connectedFor: .milliseconds(50)), .unsettled, "no cache info: its age is unknown")
        XCTAssertEqual(NeighbourAttribution.decide(entry: entry(ticksAgo: 3000), connectionAge: .zero, ticksPerSecond: 0), .unsettled)
    }

    func testTheKeysThatEachDecisionCountsBy() {
        let peer = SocketEndpoint(address: address, port: 7000, scopeID: 3, scopeName: "veth0")
        XCTAssertEqual(peer.codeHostKey(.hardware(victim)), "fe80::/10%veth0 02:77:00:00:00:02")
        XCTAssertEqual(peer.codeHostKey(.unsettled), "fe80::/10%veth0 unsettled")
        XCTAssertEqual(peer.codeHostKey(.exactAddress), "fe80::dead:1%veth0/128", "never all link-local peers as one")
        XCTAssertEqual(peer.hostKey, "fe80::dead:1", "other limits count the exact address, with no lookup")
        let v4 = SocketEndpoint(address: IPAddress(bytes: [169, 254, 9, 9])!, port: 7000)
        XCTAssertEqual(v4.codeHostKey(.hardware(victim)), "169.254.0.0/16 02:77:00:00:00:02")
        XCTAssertEqual(v4.codeHostKey(.exactAddress), "169.254.9.9/32")
        let routable = SocketEndpoint(address: IPAddress(bytes: [10, 77, 0, 3])!, port: 7000)
        XCTAssertEqual(routable.codeHostKey(.hardware(victim)), "10.77.0.3", "a routable address counts as hostKey")
    }
}
