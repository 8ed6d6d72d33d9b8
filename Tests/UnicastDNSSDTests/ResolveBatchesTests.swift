import UnicastDNSSD
import XCTest

/// `UnicastServiceDirectory.resolve(_:type:in:deliver:)`: what one read of a zone resolves,
/// 4 at a time, each host's addresses asked once.
final class ResolveBatchesTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")

    /// Registers `count` instances, alternating between hosts a and b.
    func zone(with count: Int, queryTime: Duration) async throws -> (InMemoryDNSServer, [String]) {
        let server = InMemoryDNSServer(queryTime: queryTime)
        let directory = UnicastServiceDirectory(server: server)
        let names = (1...count).map { String(format: "Room %03d", $0) }
        for (index, name) in names.enumerated() {
            let host = try DNSName(dotted: (index % 2 == 0 ? "a" : "b") + ".lab.test.")
            let address = IPAddress(index % 2 == 0 ? "10.78.1.1" : "10.78.2.1")!
            let instance = try ServiceInstance(instanceName: name, type: type, zone: zone, host: host, port: UInt16(4000 + index),
                                               txt: [Array("key=k".utf8)], addresses: [address])
            _ = try await directory.register(instance, ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        }
        return (server, names)
    }

    /// 20 instances on two hosts: every one delivered in order, at most 4 queries at once
    /// (and 4 do run at once), and each host's A and AAAA asked once for the whole read.
    func testFourResolvesAtOnceAndOneAddressLookupPerHost() async throws {
        let (server, names) = try await zone(with: 20, queryTime: .milliseconds(20))
        var delivered: [(String, ResolvedInstance?)] = []
        let finished = await UnicastServiceDirectory(server: server).resolve(names, type: type, in: zone) { name, result in
            delivered.append((name, try? result.get()))
            return true
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(delivered.map(\.0), names)
        XCTAssertEqual(delivered.map { $0.1?.instanceName }, names)
        XCTAssertEqual(delivered.map { $0.1?.addresses.first?.description }, names.indices.map { $0 % 2 == 0 ? "10.78.1.1" : "10.78.2.1" })
        XCTAssertEqual(server.mostQueriesAtOnce, UnicastServiceDirectory<InMemoryDNSServer>.concurrentResolves)
        XCTAssertEqual(server.queryCount(.srv), 20)
        XCTAssertEqual(server.queryCount(.a), 2, "one lookup per host, not per instance")
        XCTAssertEqual(server.queryCount(.aaaa), 2)
    }

    /// `deliver` returning false (SIGINT seen) starts no further batch.
    func testDeliverStopsFurtherBatches() async throws {
        let (server, names) = try await zone(with: 12, queryTime: .zero)
        var delivered = 0
        let finished = await UnicastServiceDirectory(server: server).resolve(names, type: type, in: zone) { _, _ in
            delivered += 1
            return delivered < 2
        }
        XCTAssertFalse(finished)
        XCTAssertEqual(delivered, 2)
        XCTAssertEqual(server.queryCount(.srv), UnicastServiceDirectory<InMemoryDNSServer>.concurrentResolves, "only the first batch ran")
    }
}
