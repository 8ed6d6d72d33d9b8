import TransportCore
import TransportPOSIX
import XCTest

/// A loop as a task executor: a task that prefers it runs on its thread, a task the loop
/// resumes continues after the sends gathered before it, and a task that keeps handing itself
/// over leaves the loop's timers their turn.
final class EventLoopTaskExecutorTests: XCTestCase {
    var loop: EventLoop!

    override func setUpWithError() throws {
        loop = try EventLoop(name: "test-executor")
    }

    override func tearDown() {
        loop.shutdown()
        loop = nil
    }

    func testATaskPreferringTheLoopRunsOnItsThreadAcrossAwaits() async {
        let loop = loop!
        let places = await Task(executorPreference: loop) { () async -> [Bool] in
            let first = loop.inEventLoop
            let inside = await loop.submit { loop.inEventLoop }
            await loop.sleep(for: .milliseconds(5))
            return [first, inside, loop.inEventLoop]
        }.value
        XCTAssertEqual(places, [true, true, true])
    }

    /// Resumed from a timer (as from a ready socket), the task continues at the end of the
    /// iteration, after the work gathered there before it (a connection's small sends).
    func testATaskResumedByTheLoopContinuesAfterTheGatheredWork() async {
        let loop = loop!
        let log = await Task(executorPreference: loop) { () async -> [String] in
            var log: [String] = []
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.schedule(after: .milliseconds(1)) {
                    loop.executeAtEndOfIteration { log.append("gathered send") }
                    continuation.resume()
                }
            }
            log.append("task")
            return log
        }.value
        XCTAssertEqual(log, ["gathered send", "task"])
    }

    /// A task that yields in a loop is handed to the next iteration from the end of this one:
    /// the timer that stops it still comes due.
    func testATaskThatKeepsYieldingLeavesTheTimersTheirTurn() async {
        let loop = loop!
        let turns = await Task(executorPreference: loop) { () async -> Int in
            let stop = Flag()
            loop.schedule(after: .milliseconds(20)) { stop.isSet = true }
            var turns = 0
            while !stop.isSet {
                turns += 1
                await Task.yield()
            }
            return turns
        }.value
        XCTAssertGreaterThan(turns, 1)
    }
}

/// A flag set and read on the loop only.
private final class Flag {
    var isSet = false
}
