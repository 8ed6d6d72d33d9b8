import UnicastDNSSD
import XCTest

/// `ZoneInstances`: what each read of a zone adds and removes, and the cap on new names
/// handed out to be resolved per read.
final class ZoneInstancesTests: XCTestCase {
    let names = (1...150).map { String(format: "Room %03d", $0) }

    /// 150 new names with resolving: 64 a read, in the listing's order, each added exactly
    /// once, none removed, none lost; then the zone is calm.
    func testResolvingAddsAtMost64NewNamesARead() {
        var instances = ZoneInstances()
        var added: [String] = []
        var reads = 0
        repeat {
            let change = instances.read(names, resolving: true)
            XCTAssertLessThanOrEqual(change.added.count, ZoneInstances.maximumResolvesPerRead)
            XCTAssertEqual(change.removed, [])
            added += change.added
            XCTAssertEqual(change.waiting, names.count - added.count)
            reads += 1
        } while instances.hasWaiting && reads < 10
        XCTAssertEqual(reads, 3, "64 + 64 + 22")
        XCTAssertEqual(added, names, "each listed once, in order, none lost")
        XCTAssertEqual(instances.read(names, resolving: true), ZoneInstances.Change(added: [], removed: [], waiting: 0))
    }

    /// A name still waiting when the zone drops it is never listed, so never removed either;
    /// a name listed before and dropped is removed.
    func testAWaitingNameTheZoneDropsIsNeitherAddedNorRemoved() {
        var instances = ZoneInstances()
        _ = instances.read(names, resolving: true)
        let later = names.filter { $0 != "Room 001" && $0 != "Room 100" }
        let change = instances.read(later, resolving: true)
        XCTAssertEqual(change.removed, ["Room 001"])
        XCTAssertEqual(change.added, Array(names[64..<129]).filter { $0 != "Room 100" }, "the next 64 of those still listed")
        XCTAssertFalse(change.added.contains("Room 100"))
    }

    /// Without resolving, nothing costs a query: every new name is added by the read that lists it.
    func testWithoutResolvingEveryNewNameIsAddedAtOnce() {
        var instances = ZoneInstances()
        XCTAssertEqual(instances.read(names, resolving: false).added, names)
        XCTAssertFalse(instances.hasWaiting)
        let change = instances.read(["Room 151"], resolving: false)
        XCTAssertEqual(change.added, ["Room 151"])
        XCTAssertEqual(change.removed, names)
    }
}
