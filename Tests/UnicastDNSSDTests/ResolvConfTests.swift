import UnicastDNSSD
import XCTest

final class ResolvConfTests: XCTestCase {
    func testNameserverLinesInOrderWithinTheLimit() {
        let text = """
        # comment
        search lab.test
        nameserver 10.78.1.53
        nameserver\tfd00::53
        nameserver fe80::1%eth0
        nameserver not-an-address
        nameserver 10.0.0.3
        nameserver 10.0.0.4
        """
        XCTAssertEqual(ResolvConf.nameservers(in: text), [IPAddress("10.78.1.53")!, IPAddress("fd00::53")!, IPAddress("10.0.0.3")!])
        XCTAssertEqual(ResolvConf.nameservers(in: "domain x\n"), [])
    }

    func testAMissingFileSaysWhatToDo() {
        XCTAssertThrowsError(try ResolvConf.firstServer(path: "/nonexistent/resolv.conf")) { error in
            let error = error as! UnicastDNSSDError
            XCTAssertEqual(error.code, .unreachable)
            XCTAssertTrue(error.message.hasSuffix("give --dns-server"), error.message)
        }
    }
}
