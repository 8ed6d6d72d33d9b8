import TransportCore
import XCTest

/// Review attacks14a F1 and attacks14v N1: a machine on the link wrote the room's entry for its
/// own alias as another machine's hardware address (before the accept, or right after its TLS
/// handshake), and its guesses were charged to that machine. A hardware address now counts only
/// when the entry read at accept and at CODE_START is the same, unchanged between the reads.
final class NeighbourAttributionTests: XCTestCase {
    let address = IPAddress(bytes: [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xDE, 0xAD, 0, 1])!
    let victim: [UInt8] = [0x02, 0x77, 0, 0, 0, 2]
    let attacker: [UInt8] = [0x02, 0x77, 0, 0, 0, 3]
    let accepted = ContinuousClock.now

    func entry(state: UInt16 = 0x02, hardware: [UInt8]? = [0x02, 0x77, 0, 0, 0, 2], ticksAgo: UInt32?) -> NeighbourQuery.Entry {
        NeighbourQuery.Entry(interfaceIndex: 3, address: address, state: state, linkLayerAddress: hardware, updatedTicksAgo: ticksAgo)
    }

    /// A read `after` the accept of an entry `ticksAgo` ticks old (100 ticks a second).
    func read(_ hardware: [UInt8]?, ticksAgo: UInt32, after: Duration, state: UInt16 = 0x02) -> NeighbourSighting? {
        NeighbourSighting(entry: entry(state: state, hardware: hardware, ticksAgo: ticksAgo), readAt: accepted + after, ticksPerSecond: 100)
    }

    func decide(_ atAccept: NeighbourSighting?, _ atCodeStart: NeighbourSighting?) -> NeighbourAttribution {
        NeighbourAttribution.decide(acceptedAt: accepted, atAccept: atAccept, atCodeStart: atCodeStart, ticksPerSecond: 100)
    }

    func testAnEntryUnchangedBetweenTheReadsCountsByItsHardwareAddress() {
        // 30 s old at accept; read 80 ms later, 30.08 s old.
        XCTAssertEqual(decide(read(victim, ticksAgo: 3000, after: .microseconds(100)), read(victim, ticksAgo: 3008, after: .milliseconds(80))),
                       .hardware(victim))
        // The kernel's rounding: one instant read as 0 ticks at 0.1 ms and as 1 tick (not 2) at 28 ms.
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100)), read(victim, ticksAgo: 1, after: .milliseconds(28))),
                       .hardware(victim))
        // Changed (STALE to DELAY at the SYN-ACK) 2 ms before the accept: 0 ticks at the first
        // read, and 8 ticks (85 ms, rounded down) 83 ms later.
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100), state: 0x08),
                              read(victim, ticksAgo: 8, after: .milliseconds(83), state: 0x08)), .hardware(victim))
    }

    func testN1TheEntryPointedAtTheVictimAfterTheHandshakeIsUnsettled() {
        // attacks14v N1: the attacker's own MAC at accept, the victim's from 5 ms on, CODE_START at 6 ms.
        XCTAssertEqual(decide(read(attacker, ticksAgo: 0, after: .microseconds(100)), read(victim, ticksAgo: 0, after: .milliseconds(6))),
                       .unsettled)
        // The same, read much later: still a different hardware address.
        XCTAssertEqual(decide(read(attacker, ticksAgo: 3000, after: .microseconds(100)), read(victim, ticksAgo: 500, after: .seconds(6))),
                       .unsettled)
    }

    func testAnEntryForgedBeforeTheAcceptAndChangedAgainIsUnsettled() {
        // attacks14a F1: the victim's MAC at accept (forged during the handshake), then the
        // attacker's own to receive the room's TLS flight: a different address at CODE_START.
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100)), read(attacker, ticksAgo: 1, after: .milliseconds(40))),
                       .unsettled)
        // ...and then the victim's again 30 ms after the accept: the same address, changed between the reads.
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100)), read(victim, ticksAgo: 1, after: .milliseconds(40))),
                       .unsettled)
        // Changed again within the margin (two ticks) cannot be told from no change (README: what remains).
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100)), read(victim, ticksAgo: 0, after: .milliseconds(19))),
                       .hardware(victim))
        XCTAssertEqual(decide(read(victim, ticksAgo: 0, after: .microseconds(100)), read(victim, ticksAgo: 0, after: .milliseconds(21))),
                       .unsettled, "just past the margin")
    }

    func testAnEntryChangedAfterTheAcceptButBeforeTheFirstReadIsUnsettled() {
        // A first read 50 ms after the accept of an entry 10 ms old: changed 40 ms after the accept.
        XCTAssertEqual(decide(read(victim, ticksAgo: 1, after: .milliseconds(50)), read(victim, ticksAgo: 2, after: .milliseconds(60))),
                       .unsettled)
    }

    func testAnEntryWithoutAUsableHardwareAddressIsUnsettled() {
        let good = read(victim, ticksAgo: 3000, after: .zero)
        XCTAssertEqual(decide(nil, good), .unsettled, "no entry at accept")
        XCTAssertEqual(decide(good, nil), .unsettled, "no entry at CODE_START")
        XCTAssertNil(read(victim, ticksAgo: 3000, after: .zero, state: 0x01), "incomplete")
        XCTAssertNil(read(victim, ticksAgo: 3000, after: .zero, state: 0x20), "failed")
        XCTAssertNil(read(nil, ticksAgo: 3000, after: .zero), "no hardware address")
        XCTAssertNil(NeighbourSighting(entry: entry(ticksAgo: nil), readAt: accepted, ticksPerSecond: 100), "no cache info: its age is unknown")
        XCTAssertNil(NeighbourSighting(entry: entry(ticksAgo: 3000), readAt: accepted, ticksPerSecond: 0))
        XCTAssertEqual(NeighbourAttribution.decide(acceptedAt: accepted, atAccept: good, atCodeStart: good, ticksPerSecond: 0), .unsettled)
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
