import UnicastDNSSD
import XCTest

final class UnicastServiceDirectoryTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")

    func instance(_ name: String, host: String, port: UInt16) throws -> ServiceInstance {
        try ServiceInstance(instanceName: name, type: type, zone: zone, host: try DNSName(dotted: host + ".lab.test."),
                            port: port, txt: [Array("key=k".utf8)], addresses: [IPAddress("10.78.1.1")!])
    }

    func testRegisterBrowseResolveWithdraw() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        let room = try instance("Room. one", host: "a", port: 4000)
        let registered = try await directory.register(room, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        XCTAssertEqual(registered, room)
        let browsed = try await directory.browse(type, in: zone)
        XCTAssertEqual(browsed, ["Room. one"])
        let resolved = try await directory.resolve("Room. one", type: type, in: zone)
        XCTAssertEqual(resolved?.port, 4000)
        XCTAssertEqual(resolved?.addresses, [IPAddress("10.78.1.1")!])
        XCTAssertEqual(resolved?.txt, [Array("key=k".utf8)])
        let serialBefore = try await directory.serial(of: zone)
        let refreshed = try await directory.refresh(room, ttl: 30)
        XCTAssertTrue(refreshed)
        let serialAfter = try await directory.serial(of: zone)
        XCTAssertNotEqual(serialBefore, serialAfter, "every applied update raises the serial browsers poll")
        let withdrawn = try await directory.withdraw(room)
        XCTAssertTrue(withdrawn)
        let afterwards = try await directory.browse(type, in: zone)
        XCTAssertEqual(afterwards, [])
        let gone = try await directory.resolve("Room. one", type: type, in: zone)
        XCTAssertNil(gone)
        let refreshedAgain = try await directory.refresh(room, ttl: 30)
        XCTAssertFalse(refreshedAgain, "a refresh of withdrawn records must report them lost")
    }

    func testARefreshFollowsNewAddresses() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        let room = try instance("Room", host: "a", port: 4000)
        _ = try await directory.register(room, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        let moved = try room.moved(to: [IPAddress("10.78.1.9")!, IPAddress("fd00::9")!])
        let refreshed = try await directory.refresh(moved, ttl: 30, replacing: room)
        XCTAssertTrue(refreshed)
        let resolved = try await directory.resolve("Room", type: type, in: zone)
        XCTAssertEqual(resolved?.addresses, [IPAddress("10.78.1.9")!, IPAddress("fd00::9")!])
    }

    func testConflictWithAnotherHost() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        _ = try await directory.register(try instance("Room", host: "b", port: 5000), ttl: 30, conflict: .fail, isOurLeftover: { _ in true })
        do {
            _ = try await directory.register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .fail, isOurLeftover: { _ in true })
            XCTFail("a taken name must fail under --conflict fail")
        } catch let error as UnicastDNSSDError {
            XCTAssertEqual(error.code, .conflict)
        }
        let renamed = try await directory.register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .rename, isOurLeftover: { _ in true })
        XCTAssertEqual(renamed.instanceName, "Room (2)")
        let browsed = try await directory.browse(type, in: zone)
        XCTAssertEqual(browsed, ["Room", "Room (2)"])
        // Withdrawing under b's name is refused by the prerequisite: b's records stay.
        let withdrawn = try await directory.withdraw(try instance("Room", host: "a", port: 4000))
        XCTAssertFalse(withdrawn)
        let resolved = try await directory.resolve("Room", type: type, in: zone)
        XCTAssertEqual(resolved?.port, 5000)
    }

    func testOurLeftoverIsTakenBackOnlyWhenProvablyOurs() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        _ = try await directory.register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        // Port 4000 still served by us: not a leftover.
        let renamed = try await directory.register(try instance("Room", host: "a", port: 4001), ttl: 30, conflict: .rename, isOurLeftover: { _ in false })
        XCTAssertEqual(renamed.instanceName, "Room (2)")
        // Port 4000 no longer served: taken back, the old SRV replaced.
        let back = try await directory.register(try instance("Room", host: "a", port: 4002), ttl: 30, conflict: .fail, isOurLeftover: { $0 == 4000 })
        XCTAssertEqual(back.instanceName, "Room")
        let resolved = try await directory.resolve("Room", type: type, in: zone)
        XCTAssertEqual(resolved?.port, 4002)
        XCTAssertEqual(server.all.filter { if case .service = $0.data { true } else { false } }.count, 2)
    }

    func testBrowseIgnoresPointersOutsideTheType() async throws {
        let server = InMemoryDNSServer()
        let service = try type.name.appending(zone)
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try DNSName(dotted: "elsewhere.test"))))
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending(Array("a".utf8)).prepending(Array("deep".utf8)))))
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending(Array("Fine".utf8)))))
        let names = try await UnicastServiceDirectory(server: server).browse(type, in: zone)
        XCTAssertEqual(names, ["Fine"])
    }
}

final class LeftoverTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")
    let hostA = try! DNSName(dotted: "a.lab.test.")

    func register(_ name: String, host: String, port: UInt16, on server: InMemoryDNSServer) async throws {
        let instance = try ServiceInstance(instanceName: name, type: type, zone: zone, host: try DNSName(dotted: host + ".lab.test."),
                                           port: port, txt: [], addresses: [IPAddress("10.78.1.1")!])
        _ = try await UnicastServiceDirectory(server: server).register(instance, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
    }

    func testOnlyOurUnservedRecordsAreWithdrawn() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        try await register("Mine", host: "a", port: 4000, on: server)
        try await register("Theirs", host: "b", port: 5000, on: server)

        var outcome = try await directory.withdrawLeftover("Nobody", type: type, in: zone, host: hostA, isServed: { _ in false })
        XCTAssertEqual(outcome, .nothingThere)
        outcome = try await directory.withdrawLeftover("Theirs", type: type, in: zone, host: hostA, isServed: { _ in false })
        XCTAssertEqual(outcome, .anotherHost(try DNSName(dotted: "b.lab.test.")))
        outcome = try await directory.withdrawLeftover("Mine", type: type, in: zone, host: hostA, isServed: { $0 == 4000 })
        XCTAssertEqual(outcome, .stillServed(port: 4000))
        outcome = try await directory.withdrawLeftover("Mine", type: type, in: zone, host: hostA, isServed: { _ in false })
        XCTAssertEqual(outcome, .withdrawn(port: 4000))
        let left = try await directory.browse(type, in: zone)
        XCTAssertEqual(left, ["Theirs"])
    }
}
