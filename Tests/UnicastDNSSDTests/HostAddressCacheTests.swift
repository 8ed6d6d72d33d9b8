@testable import UnicastDNSSD
import Synchronization
import XCTest

/// `HostAddressCache`: resolves of one host share one lookup, and cancellation is per waiter.
final class HostAddressCacheTests: XCTestCase {
    let host = try! DNSName(dotted: "a.lab.test.")
    let address = IPAddress("10.78.1.1")!

    /// A lookup that takes `time` unless cancelled, counting its runs and its cancellations.
    final class SlowLookup: Sendable {
        let runs = Mutex(0)
        let cancellations = Mutex(0)
        let time: Duration
        let address: IPAddress
        init(time: Duration, address: IPAddress) { (self.time, self.address) = (time, address) }
        func callAsFunction() async throws(UnicastDNSSDError) -> [IPAddress] {
            runs.withLock { $0 += 1 }
            do { try await Task.sleep(for: time) } catch {
                cancellations.withLock { $0 += 1 }
                throw UnicastDNSSDError(.cancelled, "the lookup was cancelled")
            }
            return [address]
        }
    }

    /// One of two resolves sharing a lookup is cancelled: it ends at once with `.cancelled`,
    /// and the other still gets the addresses from the one lookup, which was not cancelled.
    func testCancellingOneWaiterLeavesTheSharedLookupToTheOthers() async throws {
        let (cache, host) = (HostAddressCache(), host)
        let lookUp = SlowLookup(time: .milliseconds(500), address: address)
        let first = Task { try await cache.addresses(of: host) { () async throws(UnicastDNSSDError) in try await lookUp() } }
        let second = Task { try await cache.addresses(of: host) { () async throws(UnicastDNSSDError) in try await lookUp() } }
        try await Task.sleep(for: .milliseconds(100))
        let cancelledAt = ContinuousClock.now
        first.cancel()
        do {
            _ = try await first.value
            XCTFail("a cancelled waiter must not get the addresses")
        } catch let error as UnicastDNSSDError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertLessThan(ContinuousClock.now - cancelledAt, .milliseconds(300), "the cancelled waiter stops waiting at once")
        let addresses = try await second.value
        XCTAssertEqual(addresses, [address])
        XCTAssertEqual(lookUp.runs.withLock { $0 }, 1)
        XCTAssertEqual(lookUp.cancellations.withLock { $0 }, 0)
        let cached = try await cache.addresses(of: host) { () async throws(UnicastDNSSDError) in try await lookUp() }
        XCTAssertEqual(cached, [address])
        XCTAssertEqual(lookUp.runs.withLock { $0 }, 1, "a later resolve is answered from the cache")
    }

    /// When every waiter is cancelled the lookup is cancelled too, and a later resolve of the
    /// host looks it up again instead of getting the cancellation.
    func testTheLookupIsCancelledWhenNoWaiterRemains() async throws {
        let (cache, host) = (HostAddressCache(), host)
        let lookUp = SlowLookup(time: .seconds(5), address: address)
        let waiters = (0..<2).map { _ in Task { try await cache.addresses(of: host) { () async throws(UnicastDNSSDError) in try await lookUp() } } }
        try await Task.sleep(for: .milliseconds(100))
        for waiter in waiters { waiter.cancel() }
        for waiter in waiters { _ = try? await waiter.value }
        let deadline = ContinuousClock.now + .seconds(2)
        while lookUp.cancellations.withLock({ $0 }) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(lookUp.cancellations.withLock { $0 }, 1)
        let quick = SlowLookup(time: .zero, address: address)
        let again = try await cache.addresses(of: host) { () async throws(UnicastDNSSDError) in try await quick() }
        XCTAssertEqual(again, [address])
        XCTAssertEqual(quick.runs.withLock { $0 }, 1)
    }

    /// Review attacks16z finding 6: a lookup that timed out (one lost datagram) is not kept:
    /// the next resolve of the host asks again and gets the addresses. A definite outcome (the
    /// server's answer, here malformed) is kept for the read. (The old cache kept the timeout:
    /// 64 failures for 1 lookup.)
    func testATimeoutIsAskedAgainAndADefiniteFailureIsKept() async throws {
        let (cache, host, address) = (HostAddressCache(), host, address)
        let calls = Mutex(0)
        let flaky = { @Sendable () async throws(UnicastDNSSDError) -> [IPAddress] in
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 1 { throw UnicastDNSSDError(.timeout, "the first datagram was lost") }
            return [address]
        }
        do {
            _ = try await cache.addresses(of: host, lookUp: flaky)
            XCTFail("the first lookup times out")
        } catch {
            XCTAssertEqual(error.code, .timeout)
        }
        var failures = 0
        for _ in 0..<63 {
            do {
                let got = try await cache.addresses(of: host, lookUp: flaky)
                XCTAssertEqual(got, [address])
            } catch {
                failures += 1
            }
        }
        XCTAssertEqual(failures, 0)
        XCTAssertEqual(calls.withLock { $0 }, 2, "asked again once, then the answer is kept")

        let other = try DNSName(dotted: "b.lab.test.")
        let broken = Mutex(0)
        let malformed = { @Sendable () async throws(UnicastDNSSDError) -> [IPAddress] in
            broken.withLock { $0 += 1 }
            throw UnicastDNSSDError(.malformedReply, "the answer broke DNS rules")
        }
        for _ in 0..<3 { _ = try? await cache.addresses(of: other, lookUp: malformed) }
        XCTAssertEqual(broken.withLock { $0 }, 1, "a definite failure is not asked again within the read")
    }
}
