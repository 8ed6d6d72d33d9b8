@testable import CommandLineSupport
import Dispatch
import Glibc
import Synchronization
import XCTest

final class OutputStreamTests: XCTestCase {
    /// A pipe whose kernel buffer holds one page, so a few lines fill it.
    func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        _ = fcntl(ends[1], 1031 /* F_SETPIPE_SZ */, 4096)
        return (ends[0], ends[1])
    }

    static func readAll(_ descriptor: Int32) -> [String] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testAReaderThatStopsNeverBlocksTheWriterAndDroppedLinesAreCounted() {
        let (readEnd, writeEnd) = makePipe()
        let stream = OutputStream(descriptor: writeEnd, name: "the test pipe", capacity: 64 * 1024)
        let line = String(repeating: "x", count: 99)
        let start = ContinuousClock.now
        for number in 0..<10_000 { stream.write("\(number) \(line)\n") } // about 1 MB, 16 times the buffer
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2), "writing must not wait for the reader")

        let collected = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let all = Self.readAll(readEnd)
            collected.withLock { $0 = all }
            done.signal()
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !stream.isIdle && ContinuousClock.now < deadline { usleep(1000) }
        close(writeEnd)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        close(readEnd)

        let lines = collected.withLock { $0 }
        let printed = lines.dropLast()
        XCTAssertTrue(printed.allSatisfy { $0.hasSuffix(line) }, "only whole lines are written")
        let numbers = printed.compactMap { Int($0.prefix { $0 != " " }) }
        XCTAssertEqual(numbers, numbers.sorted(), "lines keep their order")
        let note = lines.last ?? ""
        let dropped = Int(note.split(separator: ": ").last?.prefix { $0.isNumber } ?? "") ?? -1
        XCTAssertTrue(note.hasSuffix("were not written to the test pipe because it was not read fast enough"), note)
        XCTAssertEqual(printed.count + dropped, 10_000, note)
        XCTAssertGreaterThan(dropped, 0)
    }

    func testAClosedReaderClosesTheStreamOnce() {
        signal(SIGPIPE, SIG_IGN)
        let (readEnd, writeEnd) = makePipe()
        close(readEnd)
        let stream = OutputStream(descriptor: writeEnd, name: "the test pipe", capacity: 1024)
        let reasons = Mutex<[String]>([])
        stream.onClose { reason in reasons.withLock { $0.append(reason) } }
        stream.write("first\n")
        let deadline = ContinuousClock.now + .seconds(5)
        while !stream.isIdle && ContinuousClock.now < deadline { usleep(1000) }
        stream.write("second\n")
        usleep(50_000)
        XCTAssertEqual(reasons.withLock { $0 }, ["Broken pipe (errno 32)"])
        XCTAssertTrue(stream.isIdle)
        close(writeEnd)
    }

    /// Everything the pipe holds once the writer closed it, as text.
    static func readText(_ descriptor: Int32) -> String {
        readAll(descriptor).joined(separator: "\n")
    }

    func waitUntilIdle(_ stream: CommandLineSupport.OutputStream) {
        let deadline = ContinuousClock.now + .seconds(5)
        while !stream.isIdle && ContinuousClock.now < deadline { usleep(1000) }
    }

    func testLinesLandAboveTheStatusLineWhichIsDrawnAgain() {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let other = dup(ends[1]) // stands for stdout on the same terminal
        let stream = OutputStream(descriptor: ends[1], name: "the test pipe", capacity: 1024)
        stream.write("before\n")
        waitUntilIdle(stream)
        stream.setStatus("bar 1")
        waitUntilIdle(stream)
        stream.write("a note\n")
        waitUntilIdle(stream)
        stream.write("a room line\n", to: other)
        waitUntilIdle(stream)
        stream.setStatus("bar 2")
        waitUntilIdle(stream)
        stream.setStatus(nil)
        waitUntilIdle(stream)
        stream.write("after\n")
        waitUntilIdle(stream)
        stream.setStatus("bar 3")
        waitUntilIdle(stream)
        stream.endStatus()
        stream.setStatus("bar 4") // a redraw after the end is ignored
        waitUntilIdle(stream)
        close(ends[1])
        close(other)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        close(ends[0])
        let clear = "\r\u{1B}[K"
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self),
                       "before\n" + "\rbar 1\u{1B}[K" + clear + "a note\n" + "bar 1\u{1B}[K" + clear + "a room line\n" + "bar 1\u{1B}[K"
                           + "\rbar 2\u{1B}[K" + clear + "after\n"
                           + "\rbar 3\u{1B}[K" + clear)
    }

    func testASlowTerminalGetsOnlyTheLatestStatusLine() {
        let (readEnd, writeEnd) = makePipe()
        let stream = OutputStream(descriptor: writeEnd, name: "the test pipe", capacity: 1 << 20)
        let line = String(repeating: "x", count: 99) + "\n"
        for _ in 0..<100 { stream.write(line) } // 10 KB into a 4 KB pipe: the writer waits
        let start = ContinuousClock.now
        for number in 0..<10_000 { stream.setStatus("status \(number)") }
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2), "status changes never wait for the reader")
        let text = Mutex("")
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let all = Self.readText(readEnd)
            text.withLock { $0 = all }
            done.signal()
        }
        waitUntilIdle(stream)
        close(writeEnd)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        close(readEnd)
        let output = text.withLock { $0 }
        // The writer may pick up a status line along with lines it had not started on; after
        // that it waits for the reader, and only the latest one is drawn.
        XCTAssertLessThanOrEqual(output.components(separatedBy: "status ").count - 1, 2, "the latest status line drawn, not 10,000")
        XCTAssertTrue(output.hasSuffix("status 9999\u{1B}[K"), String(output.suffix(40)).debugDescription)
    }
}
