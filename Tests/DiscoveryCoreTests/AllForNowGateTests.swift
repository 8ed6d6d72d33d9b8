import DiscoveryCore
import XCTest

final class AllForNowGateTests: XCTestCase {
    let roomOnEth0 = AllForNowGate.Sighting(name: "room", interfaceIndex: 2)
    let roomOnEth1 = AllForNowGate.Sighting(name: "room", interfaceIndex: 3)
    let otherOnEth0 = AllForNowGate.Sighting(name: "other", interfaceIndex: 2)

    func testCompleteOnlyAfterTheSignal() {
        var gate = AllForNowGate()
        gate.daemonFound(roomOnEth0, added: true)
        gate.listed(roomOnEth0)
        XCTAssertFalse(gate.isComplete, "no signal yet")
        gate.allForNow()
        XCTAssertTrue(gate.isComplete)
    }

    func testTheSignalWaitsForWhatTheDaemonFoundOnEveryInterface() {
        var gate = AllForNowGate()
        gate.daemonFound(roomOnEth0, added: true)
        gate.daemonFound(roomOnEth1, added: true)
        gate.daemonFound(otherOnEth0, added: true)
        gate.allForNow()
        gate.listed(roomOnEth0)
        XCTAssertFalse(gate.isComplete, "room on the second interface and other are not listed yet")
        gate.listed(otherOnEth0)
        XCTAssertFalse(gate.isComplete, "room on the second interface is not listed yet")
        gate.listed(roomOnEth1)
        XCTAssertTrue(gate.isComplete)
    }

    func testAnInstanceTheDaemonLostIsNotWaitedFor() {
        var gate = AllForNowGate()
        gate.daemonFound(roomOnEth0, added: true)
        gate.daemonFound(roomOnEth0, added: false)
        gate.allForNow()
        XCTAssertTrue(gate.isComplete)
    }

    func testListedBeforeTheDaemonFoundItCounts() {
        var gate = AllForNowGate()
        gate.listed(roomOnEth0)
        gate.daemonFound(roomOnEth0, added: true)
        gate.allForNow()
        XCTAssertTrue(gate.isComplete)
    }

    func testAnEmptyNetworkIsCompleteAtTheSignal() {
        var gate = AllForNowGate()
        gate.allForNow()
        XCTAssertTrue(gate.isComplete)
    }

    func testOverflowGivesUp() {
        var gate = AllForNowGate(capacity: 2)
        for index in 0..<3 { gate.daemonFound(.init(name: "n\(index)", interfaceIndex: 2), added: true) }
        gate.allForNow()
        XCTAssertFalse(gate.isUsable)
        XCTAssertFalse(gate.isComplete, "past its capacity the gate never says complete")
    }

    func testRepeatedSightingsDoNotFillIt() {
        var gate = AllForNowGate(capacity: 1)
        for _ in 0..<10 {
            gate.daemonFound(roomOnEth0, added: true)
            gate.listed(roomOnEth0)
        }
        gate.allForNow()
        XCTAssertTrue(gate.isComplete)
    }

    func testGivingUpIsFinal() {
        var gate = AllForNowGate()
        gate.giveUp()
        gate.allForNow()
        XCTAssertFalse(gate.isComplete)
    }
}
