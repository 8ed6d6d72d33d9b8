@testable import CommandLineSupport
import Dispatch
import Synchronization
import XCTest

/// The hand-off behind `StandardInputLines.lines()`: lines come in order, the reading thread
/// blocks while the buffer is full (a slow consumer slows a pipe down without buffering it),
/// the end comes after what was buffered, and a cancelled `take` returns nil and loses nothing.
final class LineHandoffTests: XCTestCase {
    func testTheReaderBlocksWhileTheBufferIsFullAndEveryLineComesInOrder() async throws {
        let handoff = LineHandoff(capacity: 4)
        let put = Atomic(0)
        DispatchQueue.global().async {
            for index in 0..<100 {
                handoff.put("\(index)")
                put.add(1, ordering: .relaxed)
            }
            handoff.finish()
        }
        // Nobody takes: the thread stops once 4 lines wait (the fifth put blocks).
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(put.load(ordering: .relaxed), 4, "the reading thread waits while the buffer is full")
        var lines: [String] = []
        while let line = await handoff.take() { lines.append(line) }
        XCTAssertEqual(lines, (0..<100).map(String.init))
    }

    func testACancelledTakeReturnsNilAndTheNextLineStaysForTheNextTake() async throws {
        let handoff = LineHandoff(capacity: 4)
        let waiting = Task { await handoff.take() }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let cancelled = await waiting.value
        XCTAssertNil(cancelled)
        handoff.put("after")
        let next = await handoff.take()
        XCTAssertEqual(next, "after")
        handoff.finish()
        let end = await handoff.take()
        XCTAssertNil(end)
    }
}
