import UnicastDNSSD
import XCTest

/// `IPAddress.hasRoute`. The case without a route (a namespace that routes only its own subnet)
/// needs the virtual LAN: WideAreaTests.testAPlainBrowseWithNoRouteToItsDNSServerDoesNotAskIt.
final class RouteCheckTests: XCTestCase {
    func testLoopbackHasARoute() throws {
        XCTAssertTrue(try XCTUnwrap(IPAddress("127.0.0.1")).hasRoute)
        XCTAssertTrue(try XCTUnwrap(IPAddress("127.0.0.53")).hasRoute)
    }
}
