import Foundation
import Glibc
import Synchronization
import UnicastDNSSD
import XCTest

/// `IPAddress.hasRoute`.
final class RouteCheckTests: XCTestCase {
    func testLoopbackHasARoute() throws {
        XCTAssertTrue(try XCTUnwrap(IPAddress("127.0.0.1")).hasRoute)
        XCTAssertTrue(try XCTUnwrap(IPAddress("127.0.0.53")).hasRoute)
    }

    /// In a network namespace of its own (only a loopback that is down, so no route at all),
    /// no IPv4 address has a route. (IPv6 there fails with EADDRNOTAVAIL, no source address,
    /// which `hasRoute` counts as a route: the exchange then runs and reports it.) unshare(CLONE_NEWNET) moves only the calling thread, so one
    /// thread of its own asks and then ends; no interface of the machine is touched and
    /// nothing is sent. Needs CAP_SYS_ADMIN (root); skipped without it.
    func testNoAddressHasARouteInAnEmptyNetworkNamespace() throws {
        let answers = Mutex<[Bool]?>(nil)
        let unshareError = Mutex<Int32>(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            // unshare(2) is not in Swift's Glibc module (it needs _GNU_SOURCE): found by name.
            typealias Unshare = @convention(c) (Int32) -> Int32
            let cloneNewNet: Int32 = 0x4000_0000
            guard let symbol = dlsym(nil, "unshare") else {
                unshareError.withLock { $0 = ENOSYS }
                return
            }
            guard unsafeBitCast(symbol, to: Unshare.self)(cloneNewNet) == 0 else {
                unshareError.withLock { $0 = errno }
                return
            }
            answers.withLock { $0 = ["10.78.1.1", "192.0.2.1", "127.0.0.1"].map { IPAddress($0)!.hasRoute } }
        }
        thread.start()
        done.wait()
        let failure = unshareError.withLock { $0 }
        if failure != 0 { throw XCTSkip("unshare(CLONE_NEWNET, 0x40000000) failed: \(String(cString: strerror(failure))) (errno \(failure)); needs root") }
        XCTAssertEqual(answers.withLock { $0 }, [false, false, false], "not even loopback: its interface is down")
        XCTAssertTrue(try XCTUnwrap(IPAddress("127.0.0.1")).hasRoute, "the other threads stay in the namespace they were in")
    }
}
