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

    func testTheLastSearchLineGivesTheSearchDomainsWithinTheLimit() throws {
        let text = """
        search old.example
        nameserver 10.78.1.53
        search lab.test. Lab.Test a..b bad\\name . x.example y.example z.example w.example v.example u.example
        """
        let names = ResolvConf.searchDomains(in: text).map(\.description)
        XCTAssertEqual(names, ["lab.test.", "x.example.", "y.example.", "z.example.", "w.example.", "v.example."])
        XCTAssertEqual(ResolvConf.searchDomains(in: "domain corp.example\n").map(\.description), ["corp.example."])
        XCTAssertEqual(ResolvConf.searchDomains(in: "nameserver 10.0.0.1\n"), [])
        let long = String(repeating: "a", count: 64) + ".example"
        XCTAssertEqual(ResolvConf.searchDomains(in: "search \(long)\n"), [], "a label over 63 bytes is not a DNS name")
    }
}
