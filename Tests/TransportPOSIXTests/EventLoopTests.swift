import Foundation
import Glibc
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// The loop's own contract: work and deadlines run on its thread in order, it wakes for work
/// from other threads, it reports descriptor readiness, and it stops without leaving threads or
/// descriptors behind.
final class EventLoopTests: XCTestCase {
    /// Collects values from the loop (and reads them in the test after waiting).
    final class Log: Sendable {
        private let items = Mutex<[String]>([])
        func append(_ item: String) { items.withLock { $0.append(item) } }
        var all: [String] { items.withLock { $0 } }
    }

    var loop: EventLoop!

    override func setUpWithError() throws {
        loop = try EventLoop(name: "test-loop")
    }

    override func tearDown() {
        loop.shutdown()
        loop = nil
    }

    func testWorkHandedOverFromAnotherThreadRunsOnTheLoopInOrder() {
        let log = Log()
        let done = expectation(description: "ran")
        XCTAssertFalse(loop.inEventLoop)
        for index in 0..<100 {
            loop.execute { [loop] in
                log.append(loop!.inEventLoop ? "\(index)" : "off the loop")
                loop!.assertOnExecutor()
                if index == 99 { done.fulfill() }
            }
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(log.all, (0..<100).map(String.init))
    }

    func testDeadlinesRunInOrderAndCancelledOnesNever() {
        let log = Log()
        let done = expectation(description: "last deadline")
        let start = loop.now
        loop.schedule(at: start + .milliseconds(60), leeway: .zero) { log.append("60"); done.fulfill() }
        loop.schedule(at: start + .milliseconds(20), leeway: .zero) { log.append("20") }
        let cancelled = loop.schedule(at: start + .milliseconds(30), leeway: .zero) { log.append("30") }
        loop.schedule(at: start + .milliseconds(40), leeway: .zero) { [loop] in
            log.append(ContinuousClock.now >= start + .milliseconds(40) && loop!.inEventLoop ? "40" : "40 early or off the loop")
        }
        loop.schedule(at: start + .milliseconds(20), leeway: .zero) { log.append("20 again") }
        cancelled.cancel()
        wait(for: [done], timeout: 5)
        XCTAssertEqual(log.all, ["20", "20 again", "40", "60"])
    }

    func testADeadlineMayCancelOneDueAtTheSameTime() {
        let log = Log()
        let done = expectation(description: "after both")
        let deadline = loop.now + .milliseconds(10)
        loop.execute { [loop] in
            let loop = loop!
            var second: (any ScheduledWork)?
            loop.schedule(at: deadline, leeway: .zero) { log.append("first"); second?.cancel() }
            second = loop.schedule(at: deadline, leeway: .zero) { log.append("second") }
            loop.schedule(at: deadline + .milliseconds(20), leeway: .zero) { done.fulfill() }
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(log.all, ["first"])
    }

    /// A loop asleep until a deadline an hour away wakes for work and for an earlier deadline
    /// handed over from another thread.
    func testASleepingLoopWakesForWorkAndForAnEarlierDeadline() {
        let ranWork = expectation(description: "work")
        let ranDeadline = expectation(description: "deadline")
        loop.schedule(after: .seconds(3600)) { XCTFail("an hour passed") }
        Thread.sleep(forTimeInterval: 0.05)
        let start = ContinuousClock.now
        loop.execute { ranWork.fulfill() }
        wait(for: [ranWork], timeout: 5)
        Thread.sleep(forTimeInterval: 0.05)
        loop.schedule(after: .milliseconds(10)) { ranDeadline.fulfill() }
        wait(for: [ranDeadline], timeout: 5)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
    }

    func testEndOfIterationWorkRunsAfterTheIterationsTasks() {
        let log = Log()
        let done = expectation(description: "ran")
        loop.execute { [loop] in
            loop!.executeAtEndOfIteration { log.append("end"); done.fulfill() }
            log.append("task")
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(log.all, ["task", "end"])
    }

    /// The read end of a pipe is reported readable while it has bytes and its owner reads, and
    /// not at all while its interest is empty.
    func testReadinessOfARegisteredDescriptor() throws {
        var ends: [Int32] = [0, 0]
        try makePipe(&ends)
        defer { close(ends[0]); close(ends[1]) }
        let owner = PipeReader(fd: ends[0], loop: loop)
        let registered = expectation(description: "registered")
        loop.execute { [loop] in
            owner.registration = try! loop!.register(ends[0], interest: .read, owner: owner)
            registered.fulfill()
        }
        wait(for: [registered], timeout: 5)
        let readable = expectation(description: "readable")
        owner.expectRead = readable
        XCTAssertEqual(write(ends[1], "ab", 2), 2)
        wait(for: [readable], timeout: 5)

        let paused = expectation(description: "paused")
        loop.execute { [loop] in
            try! loop!.setInterest([], for: owner.registration!)
            paused.fulfill()
        }
        wait(for: [paused], timeout: 5)
        XCTAssertEqual(write(ends[1], "cd", 2), 2)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(owner.received.withLock { $0 }, [97, 98], "read although its interest was empty")

        let readableAgain = expectation(description: "readable again")
        owner.expectRead = readableAgain
        loop.execute { [loop] in try! loop!.setInterest(.read, for: owner.registration!) }
        wait(for: [readableAgain], timeout: 5)
        XCTAssertEqual(owner.received.withLock { $0 }, [97, 98, 99, 100])
        // The owner deregisters as the loop closes, before the pipe is closed.
        loop.shutdown()
    }

    /// Shutting down closes registered owners, drops pending deadlines, ends the thread and
    /// closes the loop's descriptors; work handed over afterwards is dropped.
    func testShutdownClosesOwnersAndLeavesNoThreadOrDescriptor() throws {
        let descriptorsBefore = try openDescriptorCount()
        weak var stopped: EventLoop?
        let closing = Log()
        do {
            let other = try EventLoop(name: "test-stop")
            stopped = other
            var ends: [Int32] = [0, 0]
            try makePipe(&ends)
            defer { close(ends[0]); close(ends[1]) }
            let owner = PipeReader(fd: ends[0], loop: other)
            owner.onClosing = { closing.append("closing") }
            let registered = expectation(description: "registered")
            other.execute {
                owner.registration = try! other.register(ends[0], interest: .read, owner: owner)
                registered.fulfill()
            }
            wait(for: [registered], timeout: 5)
            other.schedule(after: .seconds(3600)) { closing.append("deadline ran") }
            other.shutdown()
            other.shutdown()
            other.execute { closing.append("ran after shutdown") }
        }
        XCTAssertEqual(closing.all, ["closing"])
        XCTAssertNil(stopped, "the loop outlived its thread")
        XCTAssertEqual(try openDescriptorCount(), descriptorsBefore)
    }

    func testAGroupHandsOutItsLoopsInTurn() throws {
        let group = try EventLoopGroup(loopCount: 2, name: "test-group")
        defer { group.shutdown() }
        let first = group.next(), second = group.next(), third = group.next()
        XCTAssertFalse(first === second)
        XCTAssertTrue(first === third)
        XCTAssertEqual(group.loops.map(\.name), ["test-group-0", "test-group-1"])
    }

    /// A pipe whose read end does not block.
    private func makePipe(_ ends: inout [Int32]) throws {
        XCTAssertEqual(pipe(&ends), 0)
        XCTAssertEqual(fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK), 0)
    }

    private func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }
}

/// Reads a pipe on the loop and records what it got.
private final class PipeReader: EventLoopSelectable, @unchecked Sendable {
    // `registration` and `expectRead` are set before the loop can use them; `received` is shared.
    let fd: Int32
    let loop: EventLoop
    var registration: EventLoopRegistration?
    var expectRead: XCTestExpectation?
    var onClosing: () -> Void = {}
    let received = Mutex<[UInt8]>([])

    init(fd: Int32, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
    }

    func ready(_ readiness: EventLoop.Readiness) {
        loop.assertOnExecutor()
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return }
        received.withLock { $0 += buffer.prefix(count) }
        expectRead?.fulfill()
        expectRead = nil
    }

    func eventLoopIsClosing() {
        onClosing()
        if let registration { loop.deregister(registration) }
    }
}
