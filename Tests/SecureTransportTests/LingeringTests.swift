import MessagingTesting
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// Failed connections keep their sockets for the alert at most `Lingering.limit` at a time.
final class LingeringTests: XCTestCase {
    func testPastTheLimitAConnectionIsClosedAtOnceAndTheCountComesBack() {
        let scheduler = ManualScheduler()
        let before = Lingering.current
        let room = Lingering.limit - before
        var ends: [InMemoryStream] = []
        for _ in 0...room {
            let (near, far) = InMemoryStream.pair(scheduler: scheduler)
            near.start(onBytes: { _ in }, onClose: { _ in })
            far.start(onBytes: { _ in }, onClose: { _ in })
            ends.append(far)
            Lingering.finishThenClose(near, scheduler: scheduler)
            ends.append(near)
        }
        let lingering = stride(from: 1, to: ends.count, by: 2).map { ends[$0] }
        XCTAssertEqual(Lingering.current, Lingering.limit)
        XCTAssertTrue(lingering.dropLast().allSatisfy { !$0.isOpen && !$0.isClosed }, "finished, waiting for the peer or the timer")
        XCTAssertTrue(lingering.last?.isClosed ?? false, "one past the limit is closed at once")
        scheduler.advance(by: TLSStream.lingerAfterFailure)
        XCTAssertTrue(lingering.allSatisfy(\.isClosed))
        XCTAssertEqual(Lingering.current, before)
    }
}
