import DiscoveryCore
import XCTest

final class BrowseMergerTests: XCTestCase {
    let printer = ServiceInstance(name: "printer", type: .p2pipp, domain: .local)
    let eth0 = NetworkInterface(index: 2, name: "eth0")
    let wlan0 = NetworkInterface(index: 3, name: "wlan0")

    func testOneInstanceReportedPerProtocolIsAddedAndRemovedOnce() {
        var merger = BrowseMerger()
        XCTAssertEqual(merger.add(printer, on: eth0), .added(printer, interfaces: [eth0]))
        XCTAssertNil(merger.add(printer, on: eth0), "the IPv6 report of the same interface adds nothing")
        XCTAssertNil(merger.remove(printer, on: eth0))
        XCTAssertEqual(merger.remove(printer, on: eth0), .removed(printer))
        XCTAssertTrue(merger.items.isEmpty)
    }

    func testInterfacesAreMergedIntoOneInstance() {
        var merger = BrowseMerger()
        _ = merger.add(printer, on: eth0)
        XCTAssertEqual(merger.add(printer, on: wlan0), .interfacesChanged(printer, interfaces: [eth0, wlan0]))
        XCTAssertEqual(merger.remove(printer, on: eth0), .interfacesChanged(printer, interfaces: [wlan0]))
        XCTAssertEqual(merger.remove(printer, on: wlan0), .removed(printer))
    }

    func testRemovalWithoutReportIsIgnored() {
        var merger = BrowseMerger()
        XCTAssertNil(merger.remove(printer, on: eth0))
    }

    func testResyncRemovesOnlyInstancesThatDidNotComeBack() {
        let scanner = ServiceInstance(name: "scanner", type: .p2pipp, domain: .local)
        let camera = ServiceInstance(name: "camera", type: .p2pipp, domain: .local)
        var merger = BrowseMerger()
        _ = merger.add(printer, on: eth0)
        _ = merger.add(scanner, on: eth0)
        merger.beginResync()
        XCTAssertNil(merger.add(printer, on: eth0), "a known instance coming back is not news")
        XCTAssertNil(merger.add(printer, on: wlan0))
        XCTAssertNil(merger.add(camera, on: eth0))
        let events = merger.endResync()
        XCTAssertEqual(Set(events), [
            .removed(scanner), .added(camera, interfaces: [eth0]),
            .interfacesChanged(printer, interfaces: [eth0, wlan0]),
        ])
        XCTAssertEqual(merger.items, [printer: [eth0, wlan0], camera: [eth0]])
        XCTAssertEqual(merger.endResync(), [], "a resync ends once")
    }
}
