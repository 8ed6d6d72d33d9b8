import DiscoveryCore
import XCTest

final class AllTypesStateTests: XCTestCase {
    let eth0 = NetworkInterface(index: 2, name: "eth0")

    func type(_ name: String) -> ServiceType { try! ServiceType("_\(name)._tcp") }
    func instance(_ name: String, _ type: ServiceType) -> ServiceInstance { ServiceInstance(name: name, type: type, domain: .local) }

    func testEachNewTypeIsReportedAndBrowsedOnce() {
        var state = AllTypesState()
        let http = type("http")
        XCTAssertEqual(state.typeEvent(.added(http, interfaces: [eth0])), [.reportType(.added(http, interfaces: [eth0])), .browse(http)])
        XCTAssertEqual(state.typeEvent(.added(http, interfaces: [eth0])), [.reportType(.added(http, interfaces: [eth0]))])
        XCTAssertEqual(state.browsed, [http])
    }

    func testCompleteAfterTheTypesAndEveryTypesFirstBatch() {
        var state = AllTypesState()
        let (http, ipp) = (type("http"), type("ipp"))
        _ = state.typeEvent(.added(http, interfaces: [eth0]))
        _ = state.typeEvent(.added(ipp, interfaces: [eth0]))
        XCTAssertEqual(state.instanceEvent(.completeForNow, of: http), [], "the type list is not complete yet")
        XCTAssertEqual(state.typeEvent(.completeForNow), [], "ipp's instances are not listed yet")
        XCTAssertEqual(state.instanceEvent(.completeForNow, of: ipp), [.completeForNow])
        // Once only; a type seen later does not hold anything up.
        let ssh = type("ssh")
        XCTAssertEqual(state.typeEvent(.added(ssh, interfaces: [eth0])), [.reportType(.added(ssh, interfaces: [eth0])), .browse(ssh)])
        XCTAssertEqual(state.instanceEvent(.completeForNow, of: ssh), [])
    }

    func testAFailedBrowseDoesNotHoldUpCompletion() {
        var state = AllTypesState()
        let http = type("http")
        _ = state.typeEvent(.added(http, interfaces: [eth0]))
        XCTAssertEqual(state.typeEvent(.completeForNow), [])
        XCTAssertEqual(state.browseEnded(http), [.completeForNow])
    }

    func testAnEmptyNetworkIsCompleteWithTheTypeList() {
        var state = AllTypesState()
        XCTAssertEqual(state.typeEvent(.completeForNow), [.completeForNow])
    }

    func testTypesBeyondTheLimitAreNotBrowsedAndNotedOnce() {
        var state = AllTypesState(maximumTypes: 2)
        let types = ["a", "b", "c", "d"].map(type)
        XCTAssertEqual(state.typeEvent(.added(types[0], interfaces: [eth0])).count, 2)
        XCTAssertEqual(state.typeEvent(.added(types[1], interfaces: [eth0])).count, 2)
        XCTAssertEqual(state.typeEvent(.added(types[2], interfaces: [eth0])), [.typeLimitReached(types[2])])
        XCTAssertEqual(state.typeEvent(.added(types[3], interfaces: [eth0])), [])
        XCTAssertEqual(state.typeEvent(.removed(types[3])), [], "a type never reported is never removed")
        XCTAssertEqual(state.browsed, Set(types.prefix(2)))
    }

    func testInstancesBeyondTheLimitAreNotReportedAndNotedOnce() {
        var state = AllTypesState(maximumTypes: 4, maximumInstances: 2)
        let http = type("http")
        _ = state.typeEvent(.added(http, interfaces: [eth0]))
        let (a, b, c, d) = (instance("a", http), instance("b", http), instance("c", http), instance("d", http))
        XCTAssertEqual(state.instanceEvent(.added(a, interfaces: [eth0]), of: http), [.reportInstance(.added(a, interfaces: [eth0]))])
        XCTAssertEqual(state.instanceEvent(.added(b, interfaces: [eth0]), of: http), [.reportInstance(.added(b, interfaces: [eth0]))])
        XCTAssertEqual(state.instanceEvent(.added(c, interfaces: [eth0]), of: http), [.instanceLimitReached(c)])
        XCTAssertEqual(state.instanceEvent(.added(d, interfaces: [eth0]), of: http), [])
        XCTAssertEqual(state.instanceEvent(.interfacesChanged(c, interfaces: []), of: http), [])
        XCTAssertEqual(state.instanceEvent(.removed(c), of: http), [], "an instance never reported is never removed")
        XCTAssertEqual(state.instancesWaiting, [d])
        // A reported one leaves, making room for the one that waits.
        XCTAssertEqual(state.instanceEvent(.removed(a), of: http), [.reportInstance(.removed(a)), .reportInstance(.added(d, interfaces: [eth0]))])
        XCTAssertEqual(state.instances, [b, d])
        XCTAssertEqual(state.instancesWaiting, [])
    }

    /// Instances over the limit wait, oldest first, with their latest interfaces, and at most
    /// as many as the limit: one more is dropped.
    func testWaitingInstancesAreListedOldestFirstWithinTheirBound() {
        var state = AllTypesState(maximumTypes: 4, maximumInstances: 2)
        let http = type("http")
        let eth1 = NetworkInterface(index: 3, name: "eth1")
        _ = state.typeEvent(.added(http, interfaces: [eth0]))
        let all = ["a", "b", "c", "d", "e"].map { instance($0, http) }
        for each in all { _ = state.instanceEvent(.added(each, interfaces: [eth0]), of: http) }
        XCTAssertEqual(state.instancesWaiting, [all[2], all[3]], "e is beyond the waiting bound")
        XCTAssertEqual(state.instanceEvent(.interfacesChanged(all[2], interfaces: [eth1]), of: http), [])
        XCTAssertEqual(state.instanceEvent(.removed(all[0]), of: http), [.reportInstance(.removed(all[0])), .reportInstance(.added(all[2], interfaces: [eth1]))])
        XCTAssertEqual(state.instanceEvent(.removed(all[1]), of: http), [.reportInstance(.removed(all[1])), .reportInstance(.added(all[3], interfaces: [eth0]))])
        XCTAssertEqual(state.instanceEvent(.removed(all[2]), of: http), [.reportInstance(.removed(all[2]))], "nothing waits")
        XCTAssertEqual(state.instances, [all[3]])
    }

    /// Types announced and withdrawn free their slots: a type that comes later is browsed.
    func testARemovedTypeFreesItsSlot() {
        var state = AllTypesState(maximumTypes: 2)
        let (a, b, c) = (type("a"), type("b"), type("c"))
        _ = state.typeEvent(.added(a, interfaces: [eth0]))
        _ = state.typeEvent(.added(b, interfaces: [eth0]))
        XCTAssertEqual(state.typeEvent(.removed(a)), [.reportType(.removed(a)), .stopBrowsing(a)])
        XCTAssertEqual(state.typeEvent(.added(c, interfaces: [eth0])), [.reportType(.added(c, interfaces: [eth0])), .browse(c)])
        XCTAssertEqual(state.browsed, [b, c])
        XCTAssertEqual(state.instanceEvent(.added(instance("late", a), interfaces: [eth0]), of: a), [], "a's browse was stopped")
    }

    /// A type removed while it has instances keeps its slot until the last one leaves.
    func testARemovedTypeWithInstancesKeepsItsSlotUntilTheyLeave() {
        var state = AllTypesState(maximumTypes: 1)
        let (a, b) = (type("a"), type("b"))
        let x = instance("x", a)
        _ = state.typeEvent(.added(a, interfaces: [eth0]))
        _ = state.instanceEvent(.added(x, interfaces: [eth0]), of: a)
        XCTAssertEqual(state.typeEvent(.added(b, interfaces: [eth0])), [.typeLimitReached(b)])
        XCTAssertEqual(state.typeEvent(.removed(a)), [.reportType(.removed(a))])
        XCTAssertEqual(state.browsed, [a])
        XCTAssertEqual(state.instanceEvent(.removed(x), of: a),
                       [.reportInstance(.removed(x)), .stopBrowsing(a), .reportType(.added(b, interfaces: [eth0])), .browse(b)],
                       "the waiting type takes the freed slot")
        XCTAssertEqual(state.browsed, [b])
        XCTAssertEqual(state.typesWaiting, [])
    }

    /// A type removed during the first batch no longer holds it up.
    func testARemovedTypeDoesNotHoldUpCompletion() {
        var state = AllTypesState()
        let a = type("a")
        _ = state.typeEvent(.added(a, interfaces: [eth0]))
        XCTAssertEqual(state.typeEvent(.completeForNow), [])
        XCTAssertEqual(state.typeEvent(.removed(a)), [.reportType(.removed(a)), .stopBrowsing(a), .completeForNow])
    }
}
