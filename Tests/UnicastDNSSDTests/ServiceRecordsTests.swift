import UnicastDNSSD
import XCTest

final class ServiceRecordsTests: XCTestCase {
    func instance(_ name: String = "Room 1", txt: [[UInt8]] = [Array("key=abc".utf8)]) throws -> ServiceInstance {
        let zone = try DNSName(dotted: "lab.test.")
        return try ServiceInstance(instanceName: name, type: try ServiceType("_p2pipp._tcp"), zone: zone,
                                   host: try DNSName(dotted: "host-a.lab.test."), port: 4242, txt: txt,
                                   addresses: [IPAddress("10.78.1.1")!, IPAddress("fd00::1")!, IPAddress("10.78.1.1")!])
    }

    func testRecordsOfARegistration() throws {
        let records = try instance().records(ttl: 30)
        let service = try DNSName(dotted: "_p2pipp._tcp.lab.test.")
        let name = try service.prepending(Array("Room 1".utf8))
        let host = try DNSName(dotted: "host-a.lab.test.")
        XCTAssertEqual(records, [
            ResourceRecord(name: service, ttl: 30, data: .pointer(name)),
            ResourceRecord(name: name, ttl: 30, data: .service(priority: 0, weight: 0, port: 4242, target: host)),
            ResourceRecord(name: name, ttl: 30, data: .text([Array("key=abc".utf8)])),
            ResourceRecord(name: host, ttl: 30, data: .address(IPAddress("10.78.1.1")!)),
            ResourceRecord(name: host, ttl: 30, data: .address(IPAddress("fd00::1")!)),
        ])
    }

    func testEmptyTXTIsOneEmptyString() throws {
        XCTAssertEqual(try instance(txt: []).records(ttl: 5)[2].data, .text([[]]))
    }

    func testBounds() throws {
        XCTAssertThrowsError(try instance(String(repeating: "x", count: 64))) { error in
            XCTAssertEqual((error as! UnicastDNSSDError).code, .invalidName)
        }
        XCTAssertThrowsError(try instance(txt: [Array(repeating: 0x61, count: 256)])) { error in
            XCTAssertEqual((error as! UnicastDNSSDError).code, .tooLarge)
        }
        XCTAssertThrowsError(try ServiceInstance(instanceName: "x", type: try ServiceType("_p2pipp._tcp"), zone: try DNSName(dotted: "lab.test"),
                                                 host: try DNSName(dotted: "host.elsewhere"), port: 1, txt: [], addresses: [])) { error in
            XCTAssertTrue((error as! UnicastDNSSDError).message.contains("is not inside the zone lab.test."), "\(error)")
        }
    }

    func testServiceTypes() {
        XCTAssertNoThrow(try ServiceType("_p2pipp._tcp"))
        XCTAssertNoThrow(try ServiceType("_http._tcp."))
        for bad in ["p2pipp._tcp", "_p2pipp._sctp", "_p2pipp", "_a.b._tcp", "_toolongservicename._tcp", "_._tcp", "_sp ace._tcp"] {
            XCTAssertThrowsError(try ServiceType(bad), bad)
        }
    }

    func testAddresses() {
        XCTAssertEqual(IPAddress("10.0.0.1")?.description, "10.0.0.1")
        XCTAssertEqual(IPAddress("fe80::1")?.description, "fe80::1")
        XCTAssertNil(IPAddress("fe80::1%veth0"))
        XCTAssertNil(IPAddress("host"))
    }
}
