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
        XCTAssertEqual(state.typeEvent(.removed(http)), [.reportType(.removed(http))])
        // Back again: reported, but its browse still runs.
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
        // A reported one leaves, making room.
        XCTAssertEqual(state.instanceEvent(.removed(a), of: http), [.reportInstance(.removed(a))])
        XCTAssertEqual(state.instanceEvent(.added(d, interfaces: [eth0]), of: http), [.reportInstance(.added(d, interfaces: [eth0]))])
        XCTAssertEqual(state.instances, [b, d])
    }
}
