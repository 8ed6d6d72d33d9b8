import UnicastDNSSD
import XCTest

final class UnicastServiceDirectoryTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")

    func instance(_ name: String, host: String, port: UInt16, key: String = "k", addresses: [String] = ["10.78.1.1"]) throws -> ServiceInstance {
        try ServiceInstance(instanceName: name, type: type, zone: zone, host: try DNSName(dotted: host + ".lab.test."),
                            port: port, txt: [Array("key=\(key)".utf8)], addresses: addresses.map { IPAddress($0)! })
    }

    func testRegisterBrowseResolveWithdraw() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        let room = try instance("Room. one", host: "a", port: 4000)
        let registered = try await directory.register(room, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        XCTAssertEqual(registered, room)
        let browsed = try await directory.browse(type, in: zone).names
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
        let afterwards = try await directory.browse(type, in: zone).names
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
        let refreshed = try await directory.refresh(moved, ttl: 30)
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
        let browsed = try await directory.browse(type, in: zone).names
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

    /// Twins: another machine with the same host name but another key is never taken back.
    func testALeftoverWithAnotherKeyOnOurHostNameIsNotOurs() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        _ = try await directory.register(try instance("Room", host: "twin", port: 4000, key: "theirs"), ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        let renamed = try await directory.register(try instance("Room", host: "twin", port: 4001, key: "ours"), ttl: 30, conflict: .rename, isOurLeftover: { _ in true })
        XCTAssertEqual(renamed.instanceName, "Room (2)")
        let theirs = try await directory.resolve("Room", type: type, in: zone)
        XCTAssertEqual(theirs?.port, 4000)
        let outcome = try await directory.withdrawLeftover("Room", type: type, in: zone, host: try DNSName(dotted: "twin.lab.test."),
                                                           keyItem: Array("key=ours".utf8), isServed: { _ in false })
        XCTAssertEqual(outcome, .anotherKey)
        let still = try await directory.resolve("Room", type: type, in: zone)
        XCTAssertEqual(still?.port, 4000)
    }

    /// Registering replaces the host's addresses (stale ones go); withdrawing removes them
    /// when no other instance points at the host, and keeps them when one does.
    func testAddressRecordsAreReplacedAndRemovedWithTheLastInstance() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        let host = try DNSName(dotted: "a.lab.test.")
        for stale in 1...40 { server.insert(ResourceRecord(name: host, ttl: 30, data: .address(IPAddress("10.0.0.\(stale)")!))) }
        let one = try instance("One", host: "a", port: 4000, addresses: ["10.78.1.1"])
        _ = try await directory.register(one, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        let resolved = try await directory.resolve("One", type: type, in: zone)
        XCTAssertEqual(resolved?.addresses, [IPAddress("10.78.1.1")!])
        let two = try instance("Two", host: "a", port: 4001, addresses: ["10.78.1.1"])
        _ = try await directory.register(two, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        _ = try await directory.withdraw(one)
        let stillThere = try await directory.resolve("Two", type: type, in: zone)
        XCTAssertEqual(stillThere?.addresses, [IPAddress("10.78.1.1")!], "Two still points at the host")
        _ = try await directory.withdraw(two)
        XCTAssertEqual(server.all.filter { $0.name.sameName(as: host) }, [], "the last instance takes the host's addresses with it")
    }

    /// More addresses than are kept: the same ones every time, whatever the server's order.
    func testResolveKeepsAFixedChoiceOfAddresses() async throws {
        let host = try DNSName(dotted: "a.lab.test.")
        var kept: [[IPAddress]] = []
        for order in [Array(1...40), Array((1...40).reversed())] {
            let server = InMemoryDNSServer()
            let room = try instance("Room", host: "a", port: 4000, addresses: [])
            _ = try await UnicastServiceDirectory(server: server).register(room, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
            server.insert(ResourceRecord(name: host, ttl: 30, data: .address(IPAddress("fd00::1")!)))
            for last in order { server.insert(ResourceRecord(name: host, ttl: 30, data: .address(IPAddress("10.0.0.\(last)")!))) }
            kept.append(try await UnicastServiceDirectory(server: server).resolve("Room", type: type, in: zone)?.addresses ?? [])
        }
        XCTAssertEqual(kept[0].count, UnicastServiceDirectory<InMemoryDNSServer>.maximumAddresses)
        XCTAssertEqual(kept[0], kept[1])
        XCTAssertEqual(kept[0].first, IPAddress("10.0.0.1"))
    }

    /// Instances on one host, resolved at once through one cache (as one poll of a zone
    /// does), ask for the host's addresses once: a zone listing a thousand instances on one
    /// host must not cost a thousand A and AAAA queries.
    func testResolvesSharingACacheLookUpAHostOnce() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        let names = (1...6).map { "Room \($0)" }
        for (offset, name) in names.enumerated() {
            _ = try await directory.register(try instance(name, host: "a", port: UInt16(4000 + offset)), ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        }
        let (cache, type, zone) = (HostAddressCache(), type, zone)
        let resolved = await withTaskGroup(of: ResolvedInstance?.self) { group in
            for name in names { group.addTask { try? await directory.resolve(name, type: type, in: zone, cache: cache) } }
            var resolved: [ResolvedInstance] = []
            for await instance in group { if let instance { resolved.append(instance) } }
            return resolved
        }
        XCTAssertEqual(resolved.count, names.count)
        XCTAssertTrue(resolved.allSatisfy { $0.addresses == [IPAddress("10.78.1.1")!] })
        XCTAssertEqual(server.queryCount(.a), 1)
        XCTAssertEqual(server.queryCount(.aaaa), 1)
        XCTAssertEqual(server.queryCount(.srv), names.count)
    }

    /// A label that is not UTF-8 is skipped (it would be resolved under another name), and a
    /// list longer than the bound says how many were cut.
    func testBrowseSkipsNamesThatAreNotUTF8AndCountsWhatItCuts() async throws {
        let server = InMemoryDNSServer()
        let service = try type.name.appending(zone)
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending([0xFF, 0xFE, 0x20, 0x62]))))
        let total = UnicastServiceDirectory<InMemoryDNSServer>.maximumInstances + 5
        for index in 0..<total {
            server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending(Array("room \(1_000_000 + index)".utf8)))))
        }
        let listing = try await UnicastServiceDirectory(server: server).browse(type, in: zone)
        XCTAssertEqual(listing.notUTF8, 1)
        XCTAssertEqual(listing.cut, 5)
        XCTAssertEqual(listing.names.count, UnicastServiceDirectory<InMemoryDNSServer>.maximumInstances)
        XCTAssertEqual(listing.names.first, "room 1000000")
        XCTAssertEqual(listing.names.last, "room \(1_000_000 + UnicastServiceDirectory<InMemoryDNSServer>.maximumInstances - 1)")
    }

    func testBrowseIgnoresPointersOutsideTheType() async throws {
        let server = InMemoryDNSServer()
        let service = try type.name.appending(zone)
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try DNSName(dotted: "elsewhere.test"))))
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending(Array("a".utf8)).prepending(Array("deep".utf8)))))
        server.insert(ResourceRecord(name: service, ttl: 5, data: .pointer(try service.prepending(Array("Fine".utf8)))))
        let names = try await UnicastServiceDirectory(server: server).browse(type, in: zone).names
        XCTAssertEqual(names, ["Fine"])
    }
}

final class LeftoverTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")
    let hostA = try! DNSName(dotted: "a.lab.test.")
    let keyA = Array("key=a".utf8)

    func register(_ name: String, host: String, port: UInt16, on server: InMemoryDNSServer) async throws {
        let instance = try ServiceInstance(instanceName: name, type: type, zone: zone, host: try DNSName(dotted: host + ".lab.test."),
                                           port: port, txt: [Array("key=a".utf8)], addresses: [IPAddress("10.78.1.1")!])
        _ = try await UnicastServiceDirectory(server: server).register(instance, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
    }

    func testOnlyOurUnservedRecordsAreWithdrawn() async throws {
        let server = InMemoryDNSServer()
        let directory = UnicastServiceDirectory(server: server)
        try await register("Mine", host: "a", port: 4000, on: server)
        try await register("Theirs", host: "b", port: 5000, on: server)

        var outcome = try await directory.withdrawLeftover("Nobody", type: type, in: zone, host: hostA, keyItem: keyA, isServed: { _ in false })
        XCTAssertEqual(outcome, .nothingThere)
        outcome = try await directory.withdrawLeftover("Theirs", type: type, in: zone, host: hostA, keyItem: keyA, isServed: { _ in false })
        XCTAssertEqual(outcome, .anotherHost(try DNSName(dotted: "b.lab.test.")))
        outcome = try await directory.withdrawLeftover("Mine", type: type, in: zone, host: hostA, keyItem: keyA, isServed: { $0 == 4000 })
        XCTAssertEqual(outcome, .stillServed(port: 4000))
        outcome = try await directory.withdrawLeftover("Mine", type: type, in: zone, host: hostA, keyItem: keyA, isServed: { _ in false })
        XCTAssertEqual(outcome, .withdrawn(port: 4000))
        let left = try await directory.browse(type, in: zone).names
        XCTAssertEqual(left, ["Theirs"])
    }
}
