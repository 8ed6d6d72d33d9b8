import UnicastDNSSD
import XCTest

/// `ZoneInstances`: what each read of a zone adds and removes, and the cap on new names
/// handed out to be resolved per read.
final class ZoneInstancesTests: XCTestCase {
    let names = (1...150).map { String(format: "Room %03d", $0) }

    /// 150 new names with resolving: 64 a read, in the listing's order (the order they were seen), each added exactly
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

    /// Review attacks16z finding 2: a name that waits keeps its place; 64 fresh names that sort
    /// before it at every read do not hold it back (the old code rebuilt the queue in listing
    /// order at every read and never listed it).
    func testAWaitingNameIsNotStarvedByFreshNamesSortingBeforeIt() {
        var instances = ZoneInstances()
        var added: [String] = []
        for read in 0..<3 {
            let fresh = (0..<64).map { String(format: "a%04d-%02d", read, $0) }
            added += instances.read(fresh + ["printer"], resolving: true).added
        }
        XCTAssertEqual(added.filter { $0 == "printer" }.count, 1, "waiting since the first read, listed by the second")
        let second = instances.read((0..<64).map { String(format: "b%02d", $0) } + ["printer"], resolving: true)
        XCTAssertFalse(second.added.contains("printer"), "listed once")
    }

    /// The names that waited longest are resolved first, then those new to this read.
    func testTheLongestWaitingComeFirst() {
        var instances = ZoneInstances()
        _ = instances.read(names, resolving: true)  // Room 065 to Room 150 wait
        let change = instances.read(["Room 000"] + names, resolving: true)
        XCTAssertEqual(change.added, Array(names[64..<128]))
        XCTAssertEqual(instances.read(["Room 000"] + names, resolving: true).added, Array(names[128...]) + ["Room 000"])
    }

    /// Review attacks16z finding 5: names are told apart by their bytes, as DNS and the
    /// listing do: `café` precomposed and decomposed are two instances, each added once and
    /// removed once (the old code added two and removed one, late).
    func testCanonicallyEquivalentNamesAreTwoInstances() {
        var instances = ZoneInstances()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        XCTAssertEqual(instances.read([composed, decomposed], resolving: false).added, [composed, decomposed])
        let second = instances.read([decomposed], resolving: false)
        XCTAssertEqual(second.removed.map { Array($0.utf8) }, [Array(composed.utf8)], "the one that went is removed at once")
        XCTAssertEqual(instances.read([], resolving: false).removed.map { Array($0.utf8) }, [Array(decomposed.utf8)])
    }

    /// Names handed out but never listed (the browse stopped first) wait again, first in line;
    /// `takeWaiting` hands out all that wait and counts them as listed.
    func testNamesPutBackWaitFirstAndTakeWaitingEmptiesTheQueue() {
        var instances = ZoneInstances()
        let first = instances.read(names, resolving: true)
        instances.putBack(Array(first.added.suffix(4)))
        XCTAssertEqual(instances.read(names, resolving: true).added, Array(names[60..<124]))
        XCTAssertEqual(instances.takeWaiting(), Array(names[124...]))
        XCTAssertFalse(instances.hasWaiting)
        XCTAssertEqual(instances.read(names, resolving: true), ZoneInstances.Change(added: [], removed: [], waiting: 0))
    }
}
