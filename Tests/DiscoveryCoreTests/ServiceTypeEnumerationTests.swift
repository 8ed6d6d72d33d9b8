import DiscoveryCore
import XCTest

/// Service types as a type enumeration reports them (from the network, so hostile).
final class ServiceTypeEnumerationTests: XCTestCase {
    func testReportedTypesAreParsed() throws {
        XCTAssertEqual(try ServiceType(enumeratedName: "_http", protocol: "_tcp."), try ServiceType("_http._tcp"))
        XCTAssertEqual(try ServiceType(enumeratedName: "_ipp", protocol: "_tcp").baseType, "_ipp._tcp")
        XCTAssertEqual(try ServiceType(enumeratedName: "_sleep-proxy", protocol: "_UDP.").baseType, "_sleep-proxy._udp")
    }

    func testMalformedReportsAreRejected() {
        let hostile: [(String, String)] = [
            ("_http,_printer", "_tcp."), // a subtype smuggled in through the comma form
            ("_ht.tp", "_tcp."), // an escaped dot inside the label
            ("_http", "_sub._tcp."), // more labels
            ("_http", "_tcp,_x"),
            ("http", "_tcp."), // no underscore
            ("_http", "_sctp."),
            ("_", "_tcp."),
            ("_a-very-long-service-name", "_tcp."), // RFC 6335: at most 15 characters
            ("_bad\u{1B}[2J", "_tcp."), // a terminal escape
            ("_caf\u{E9}", "_tcp."),
            ("", ""),
        ]
        for (name, transport) in hostile {
            XCTAssertThrowsError(try ServiceType(enumeratedName: name, protocol: transport), "\(name) \(transport)") { error in
                XCTAssertEqual((error as? DiscoveryError)?.code, .invalidServiceType)
            }
        }
    }

    func testTypesAreMergedOverInterfacesAndProtocols() throws {
        let http = try ServiceType("_http._tcp")
        let eth0 = NetworkInterface(index: 2, name: "eth0")
        var merger = DiscoveryMerger<ServiceType>()
        XCTAssertEqual(merger.add(http, on: eth0), .added(http, interfaces: [eth0]))
        XCTAssertNil(merger.add(http, on: eth0), "a second host announcing the type, or IPv6, adds nothing")
        XCTAssertNil(merger.remove(http, on: eth0))
        XCTAssertEqual(merger.remove(http, on: eth0), .removed(http))
    }
}
