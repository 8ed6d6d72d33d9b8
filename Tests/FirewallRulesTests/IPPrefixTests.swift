import FirewallRules
import XCTest

final class IPPrefixTests: XCTestCase {
    func testParsesAndContains() throws {
        XCTAssertEqual(IPPrefix("224.0.0.251")?.description, "224.0.0.251")
        XCTAssertEqual(IPPrefix("ff02::fb")?.description, "ff02:0:0:0:0:0:0:fb")
        XCTAssertEqual(IPPrefix("::ffff:10.0.0.1/96")?.length, 96)
        XCTAssertTrue(try XCTUnwrap(IPPrefix("224.0.0.0/4")).contains(.mdnsIPv4))
        XCTAssertTrue(try XCTUnwrap(IPPrefix("ff00::/8")).contains(.mdnsIPv6))
        XCTAssertFalse(try XCTUnwrap(IPPrefix("10.0.0.0/8")).contains(.mdnsIPv4))
        XCTAssertFalse(try XCTUnwrap(IPPrefix("fe80::/10")).contains(.mdnsIPv6))
        XCTAssertTrue(IPPrefix.mdnsIPv4.isMulticast)
        XCTAssertFalse(try XCTUnwrap(IPPrefix("0.0.0.0/0")).isMulticast)
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4/33", "::1::2", "fe80::/129", "gggg::", "1:2:3:4:5:6:7:8:9", "1.2.3.4/", "+1.2.3.4", String(repeating: "1", count: 100)] {
            XCTAssertNil(IPPrefix(bad), bad)
        }
    }
}
