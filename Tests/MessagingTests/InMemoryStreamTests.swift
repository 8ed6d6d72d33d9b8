import MessagingTesting
import TransportCore
import TransportPOSIX
import XCTest

/// The test doubles behave like the real thing where links can tell.
final class InMemoryStreamTests: XCTestCase {
    let scheduler = ManualScheduler()

    final class Reader {
        var bytes: [UInt8] = []
        var reads = 0
        var closed: [Connection.CloseReason] = []
        init(_ stream: InMemoryStream) {
            stream.start(onBytes: { [unowned self] in bytes += $0; reads += 1 }, onClose: { [unowned self] in closed.append($0) })
        }
    }

    func testBytesArriveInOrderInReadsOfAtMostTheChunk() {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: 3)
        let reader = Reader(b)
        _ = Reader(a)
        a.send([1, 2, 3, 4, 5, 6, 7])
        a.send([8])
        XCTAssertEqual(reader.bytes, [], "nothing moves until the scheduler runs")
        scheduler.run()
        XCTAssertEqual(reader.bytes, [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(reader.reads, 3)
    }

    func testAReaderThatPausesFillsTheSendersOutboxUntilItFails() {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler, outboxLimit: 10)
        let writer = Reader(a)
        let reader = Reader(b)
        b.pauseReading()
        XCTAssertTrue(a.send([UInt8](repeating: 1, count: 10)))
        scheduler.run()
        XCTAssertEqual(a.bufferedByteCount, 10)
        XCTAssertFalse(a.send([2]))
        guard case .failed = writer.closed.first else { return XCTFail("closed with \(writer.closed)") }
        scheduler.run()
        XCTAssertEqual(reader.closed, [.reset], "the data that waited was lost")
    }

    func testFinishWaitsForBothSidesAndDrainedIsCalled() {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let left = Reader(a)
        let right = Reader(b)
        var drained = 0
        a.whenDrained { drained += 1 }
        a.send([1, 2])
        a.finish()
        XCTAssertFalse(a.isOpen)
        XCTAssertFalse(a.send([3]))
        scheduler.run()
        XCTAssertEqual(right.bytes, [1, 2])
        XCTAssertEqual(left.closed, [.closedByPeer])
        XCTAssertEqual(right.closed, [.closedByPeer])
        XCTAssertEqual(drained, 0, "a finishing stream does not ask for more")
    }

    func testTimersFireInDeadlineOrderWithTheClockAtTheirDeadline() {
        var fired: [(String, Duration)] = []
        let start = scheduler.now
        scheduler.schedule(after: .seconds(3)) { fired.append(("three", self.scheduler.now - start)) }
        scheduler.schedule(after: .seconds(1)) { fired.append(("one", self.scheduler.now - start)) }
        let cancelled = scheduler.schedule(after: .seconds(2)) { fired.append(("two", .zero)) }
        cancelled.cancel()
        scheduler.advance(by: .seconds(2))
        XCTAssertEqual(fired.map(\.0), ["one"])
        scheduler.advance(by: .seconds(5))
        XCTAssertEqual(fired.map(\.0), ["one", "three"])
        XCTAssertEqual(fired.map(\.1), [.seconds(1), .seconds(3)])
        XCTAssertEqual(scheduler.now - start, .seconds(7))
    }
}
