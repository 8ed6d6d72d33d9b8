@testable import CommandLineSupport
import Dispatch
import Synchronization
import XCTest

/// The hand-off behind `StandardInputLines.lines()` and svc-publish's lines waiting to be sent:
/// values come in order, the producer (a thread in `put`, a task in `enqueue`) waits while the
/// buffer is full (a slow consumer slows a pipe down without buffering it), the end comes after
/// what was buffered, and a cancelled `take` returns nil and loses nothing.
final class HandoffTests: XCTestCase {
    func testTheReaderBlocksWhileTheBufferIsFullAndEveryLineComesInOrder() async throws {
        let handoff = Handoff<String>(capacity: 4)
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
        let handoff = Handoff<String>(capacity: 4)
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

    func testATaskThatEnqueuesWaitsWhileTheBufferIsFullAndEveryValueComesInOrder() async throws {
        let handoff = Handoff<Int>(capacity: 3)
        let enqueued = Atomic(0)
        let producer = Task {
            for index in 0..<50 {
                guard await handoff.enqueue(index) else { return false }
                enqueued.add(1, ordering: .relaxed)
            }
            handoff.finish()
            return true
        }
        // Nobody takes: the task stops once 3 values wait (the fourth enqueue suspends).
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(enqueued.load(ordering: .relaxed), 3, "the producing task waits while the buffer is full")
        var values: [Int] = []
        while let value = await handoff.take() { values.append(value) }
        XCTAssertEqual(values, Array(0..<50))
        let finished = await producer.value
        XCTAssertTrue(finished)
    }

    func testACancelledEnqueueReturnsFalseAndHandsNothingOver() async throws {
        let handoff = Handoff<String>(capacity: 1)
        let first = await handoff.enqueue("first")
        XCTAssertTrue(first)
        let blocked = Task { await handoff.enqueue("never") }
        try await Task.sleep(for: .milliseconds(50))
        blocked.cancel()
        let handed = await blocked.value
        XCTAssertFalse(handed, "a cancelled enqueue gives up")
        handoff.finish()
        var values: [String] = []
        while let value = await handoff.take() { values.append(value) }
        XCTAssertEqual(values, ["first"], "the value of the cancelled enqueue was not handed over")
    }

    func testAnEnqueueWaitingWhenTheHandoffIsFinishedReturnsFalse() async throws {
        let handoff = Handoff<String>(capacity: 1)
        _ = await handoff.enqueue("first")
        let blocked = Task { await handoff.enqueue("late") }
        try await Task.sleep(for: .milliseconds(50))
        handoff.finish()
        let handed = await blocked.value
        XCTAssertFalse(handed)
        let afterEnd = await handoff.enqueue("after")
        XCTAssertFalse(afterEnd, "nothing is taken after the end")
        let value = await handoff.take()
        XCTAssertEqual(value, "first")
        let end = await handoff.take()
        XCTAssertNil(end)
    }
}
