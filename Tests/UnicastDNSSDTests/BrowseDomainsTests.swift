import UnicastDNSSD
import XCTest

/// RFC 6763 section 11: where browse domains are asked, and how the answers are read and bounded.
final class BrowseDomainsTests: XCTestCase {
    func name(_ text: String) throws -> DNSName { try DNSName(dotted: text) }

    func testReverseMappingNamesOfSubnets() throws {
        let v4 = try XCTUnwrap(IPSubnet(address: try XCTUnwrap(IPAddress("192.0.2.77")), prefixLength: 24))
        XCTAssertEqual(v4.reverseMappingName?.description, "0.2.0.192.in-addr.arpa.")
        XCTAssertEqual(v4.description, "192.0.2.0/24")
        let odd = try XCTUnwrap(IPSubnet(address: try XCTUnwrap(IPAddress("10.78.1.200")), prefixLength: 25))
        XCTAssertEqual(odd.reverseMappingName?.description, "128.1.78.10.in-addr.arpa.")
        let v6 = try XCTUnwrap(IPSubnet(address: try XCTUnwrap(IPAddress("2001:db8:1:2::99")), prefixLength: 64))
        XCTAssertEqual(v6.reverseMappingName?.description,
                       "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.2.0.0.0.1.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.")
        XCTAssertNil(IPSubnet(address: try XCTUnwrap(IPAddress("10.0.0.1")), prefixLength: 33))
        XCTAssertNil(IPSubnet(address: .v4([10, 0, 0]), prefixLength: 8))
        // Netmasks as getifaddrs gives them.
        XCTAssertEqual(IPSubnet(address: .v4([10, 78, 2, 2]), mask: [255, 255, 255, 0])?.description, "10.78.2.0/24")
        XCTAssertEqual(IPSubnet(address: .v4([10, 78, 2, 200]), mask: [255, 255, 255, 128])?.prefixLength, 25)
        XCTAssertEqual(IPSubnet(address: .v4([10, 78, 2, 2]), mask: [0, 0, 0, 0])?.prefixLength, 0)
        XCTAssertEqual(IPSubnet(address: try XCTUnwrap(IPAddress("2001:db8::1")), mask: Array(repeating: 0xFF, count: 8) + Array(repeating: 0, count: 8))?.prefixLength, 64)
        XCTAssertNil(IPSubnet(address: .v4([10, 0, 0, 1]), mask: [255, 255, 255, 0, 0]))
    }

    func testQueryNamesOfEachKind() throws {
        let zone = try name("lab.test.")
        XCTAssertEqual(BrowseDomainKind.allCases.map { (try? $0.queryName(under: zone))?.description },
                       ["b._dns-sd._udp.lab.test.", "db._dns-sd._udp.lab.test.", "lb._dns-sd._udp.lab.test.", "r._dns-sd._udp.lab.test.", "dr._dns-sd._udp.lab.test."])
        // A starting point so long that the query name would pass 255 bytes is refused, not cut.
        let long = try DNSName(labels: Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 60), count: 4))
        XCTAssertThrowsError(try BrowseDomainKind.browse.queryName(under: long))
    }

    func testStartingPointsAreSearchDomainsThenSubnetsEachOnceWithinTheLimit() throws {
        let subnet = try XCTUnwrap(IPSubnet(address: try XCTUnwrap(IPAddress("10.78.1.1")), prefixLength: 24))
        let points = DomainEnumeration.startingPoints(searchDomains: [try name("lab.test."), try name("LAB.test.")], subnets: [subnet, subnet])
        XCTAssertEqual(points.map(\.description), ["lab.test.", "0.1.78.10.in-addr.arpa."])
        let many = try (0..<20).map { try name("d\($0).example.") }
        XCTAssertEqual(DomainEnumeration.startingPoints(searchDomains: many, subnets: []).count, DomainEnumeration.maximumStartingPoints)
    }

    func testAnswersAreReadDeduplicatedAndBounded() async throws {
        let server = InMemoryDNSServer()
        let zone = try name("lab.test.")
        let reverse = try name("0.1.78.10.in-addr.arpa.")
        for point in [zone, reverse] {
            server.insert(ResourceRecord(name: try BrowseDomainKind.browse.queryName(under: point), ttl: 60, data: .pointer(zone)))
        }
        // A hostile answer: a domain with a newline and an escape byte, a record at another
        // name, a record of another type, and many more domains than one answer may give.
        let hostile = try DNSName(labels: [Array("evil\n\u{1B}[2J".utf8), Array("test".utf8)])
        let legacy = try BrowseDomainKind.legacyBrowse.queryName(under: zone)
        server.insert(ResourceRecord(name: legacy, ttl: 60, data: .pointer(hostile)))
        server.insert(ResourceRecord(name: try name("other.lab.test."), ttl: 60, data: .pointer(try name("elsewhere.test."))))
        server.insert(ResourceRecord(name: legacy, ttl: 60, data: .text([Array("not a pointer".utf8)])))
        for index in 0..<40 {
            server.insert(ResourceRecord(name: legacy, ttl: 60, data: .pointer(try name("d\(index).test."))))
        }
        let directory = UnicastServiceDirectory(server: server)
        let found = await directory.enumerateDomains([.browse, .legacyBrowse], startingPoints: [zone, reverse])
        XCTAssertTrue(found.failures.isEmpty)
        let browse = found.domains.filter { $0.kind == .browse }
        XCTAssertEqual(browse.count, 1, "one domain named from two starting points is listed once")
        XCTAssertEqual(browse.first?.queries.map(\.description), ["b._dns-sd._udp.lab.test.", "b._dns-sd._udp.0.1.78.10.in-addr.arpa."])
        let legacyDomains = found.domains.filter { $0.kind == .legacyBrowse }.map(\.domain)
        XCTAssertEqual(legacyDomains.count, DomainEnumeration.maximumDomainsPerAnswer)
        XCTAssertEqual(found.cut, 41 - DomainEnumeration.maximumDomainsPerAnswer)
        XCTAssertEqual(legacyDomains.first?.description, "evil\\010\\027[2J.test.", "control bytes are escaped in the presentation form")
        XCTAssertFalse(legacyDomains.contains { $0.description == "elsewhere.test." })
    }

    func testAServerThatFailsIsListedAndItsOtherKindsAreNotAsked() async throws {
        let directory = UnicastServiceDirectory(server: FailingServer())
        let zone = try name("lab.test.")
        let found = await directory.enumerateDomains(BrowseDomainKind.allCases, startingPoints: [zone])
        XCTAssertEqual(found.domains, [])
        XCTAssertEqual(found.failures.map(\.startingPoint), [zone])
        XCTAssertEqual(found.failures.first?.error.code, .timeout)
        XCTAssertEqual(FailingServer.asked.withLock { $0 }, 1)
    }

    func testAStartingPointWithoutAZoneRecommendsNothing() async throws {
        let directory = UnicastServiceDirectory(server: NoZoneServer())
        let found = await directory.enumerateDomains(BrowseDomainKind.allCases, startingPoints: [try name("lab.test.")])
        XCTAssertEqual(found.domains, [])
        XCTAssertTrue(found.failures.isEmpty)
    }
}

import Synchronization

/// A server that never answers in time.
private struct FailingServer: UnicastDNSServer {
    static let asked = Mutex(0)
    func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome { throw UnicastDNSSDError(.timeout, "no answer") }
    func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] {
        Self.asked.withLock { $0 += 1 }
        throw UnicastDNSSDError(.timeout, "no answer")
    }
    func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? { throw UnicastDNSSDError(.timeout, "no answer") }
}

/// A server that serves no zone holding the names asked (REFUSED).
private struct NoZoneServer: UnicastDNSServer {
    func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome { throw UnicastDNSSDError(.noSuchZone, "no zone") }
    func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] { throw UnicastDNSSDError(.noSuchZone, "no zone") }
    func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? { throw UnicastDNSSDError(.noSuchZone, "no zone") }
}
