import Synchronization
import TransportCore
import XCTest

/// A value shared between test tasks.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

final class ConcurrencyLimitTests: XCTestCase {
    /// Never more than `limit` run at once; all of them run, within the waiting bound.
    func testAtMostLimitRunAtOnce() async throws {
        let limit = ConcurrencyLimit(limit: 3, maximumWaiting: 100)
        let counts = Shared((now: 0, most: 0, done: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await limit.run {
                        counts.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        try await Task.sleep(for: .milliseconds(5))
                        counts.withLock { $0.now -= 1; $0.done += 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = counts.withLock { $0 }
        XCTAssertEqual(final.done, 40)
        XCTAssertEqual(final.most, 3)
        let load = await limit.load
        XCTAssertEqual(load.running, 0)
        XCTAssertEqual(load.waiting, 0)
    }

    /// `close` turns every waiter away at once and all later work; what runs goes on.
    func testCloseTurnsAwayEveryWaiterAtOnceAndLetsWhatRunsFinish() async throws {
        let limit = ConcurrencyLimit(limit: 1, maximumWaiting: 100)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let first = Task { try await limit.run { for await _ in gate {}; return "ran" } }
        while await limit.load.running == 0 { await Task.yield() }
        let waiters = (0..<50).map { _ in Task { try await limit.run { "ran" } } }
        while await limit.load.waiting < 50 { await Task.yield() }
        await limit.close()
        for waiter in waiters {
            do {
                _ = try await waiter.value
                XCTFail("a waiter ran after close")
            } catch let refusal as ConcurrencyLimit.Refusal {
                XCTAssertEqual(refusal, .cancelled)
            }
        }
        do {
            _ = try await limit.run { "ran" }
            XCTFail("work after close ran")
        } catch let refusal as ConcurrencyLimit.Refusal {
            XCTAssertEqual(refusal, .cancelled)
        }
        open.finish()
        let ran = try await first.value
        XCTAssertEqual(ran, "ran", "what ran when the limit closed finished")
    }

    /// Waiters are served first come, first served; one beyond the waiting bound is refused.
    func testWaitersRunInOrderAndTheQueueIsBounded() async throws {
        let limit = ConcurrencyLimit(limit: 1, maximumWaiting: 2)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let order = Shared<[Int]>([])
        let first = Task { try await limit.run { for await _ in gate {} } }
        while await limit.load.running == 0 { await Task.yield() }
        var waiters: [Task<Void, any Error>] = []
        for index in 1...2 {
            waiters.append(Task { try await limit.run { order.withLock { $0.append(index) } } })
            while await limit.load.waiting < index { await Task.yield() }
        }
        do {
            try await limit.run {}
            XCTFail("a third waiter is refused")
        } catch let refusal as ConcurrencyLimit.Refusal {
            XCTAssertEqual(refusal, .queueFull)
        }
        open.finish()
        try await first.value
        for waiter in waiters { try await waiter.value }
        XCTAssertEqual(order.withLock { $0 }, [1, 2])
    }

    /// A waiter whose task is cancelled leaves the queue and does not run.
    func testACancelledWaiterLeaves() async throws {
        let limit = ConcurrencyLimit(limit: 1, maximumWaiting: 4)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let first = Task { try await limit.run { for await _ in gate {} } }
        while await limit.load.running == 0 { await Task.yield() }
        let ran = Shared(false)
        let waiter = Task { try await limit.run { ran.withLock { $0 = true } } }
        while await limit.load.waiting == 0 { await Task.yield() }
        waiter.cancel()
        do {
            try await waiter.value
            XCTFail("a cancelled waiter is refused")
        } catch let refusal as ConcurrencyLimit.Refusal {
            XCTAssertEqual(refusal, .cancelled)
        }
        let waiting = await limit.load.waiting
        XCTAssertEqual(waiting, 0)
        open.finish()
        try await first.value
        XCTAssertFalse(ran.withLock { $0 })
        let running = await limit.load.running
        XCTAssertEqual(running, 0)
    }
}
