import Foundation
import XCTest

/// Standard input as a pipe far larger than any outbox, both ways: svc-publish and svc-connect
/// read it only as fast as their async `send` lets lines go (it waits on the members' outboxes,
/// the flow window and the connection's outbox), so nobody is cut off and every line arrives,
/// in order.
extension ChatTests {
    /// The numbers after `marker` in the lines that have it, in output order.
    func numbers(after marker: String, in lines: [String]) -> [Int] {
        lines.compactMap { line in
            guard let range = line.range(of: marker) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    func testAPipeOfManyMegabytesArrivesWholeAndInOrderBothWays() throws {
        let name = TestLAN.uniqueName("pipe")
        let publisher = try publish(name)
        let ann = try join(name, as: "ann")
        XCTAssertNotNil(ann.waitForEvent(where: event("joined")), ann.transcript)
        // 3,000 lines of 2 kB: 6 MB, more than a connection's 4 MiB outbox holds.
        let padding = String(repeating: "p", count: 2000)
        let count = 3000
        for index in 0..<count { publisher.send("down \(index) \(padding)") }
        XCTAssertNotNil(ann.waitForLine(timeout: 120) { $0.contains("down \(count - 1) ") },
                        "ann got \(numbers(after: "down ", in: ann.stdout).count) of \(count) lines; " + ann.stderr.joined(separator: "\n"))
        XCTAssertEqual(numbers(after: "down ", in: ann.stdout), Array(0..<count), "every line of the publisher's pipe, in order")
        for index in 0..<count { ann.send("up \(index) \(padding)") }
        XCTAssertNotNil(publisher.waitForLine(timeout: 120) { $0.contains("up \(count - 1) ") },
                        "the publisher got \(numbers(after: "up ", in: publisher.stdout).count) of \(count) lines; " + publisher.stderr.joined(separator: "\n"))
        XCTAssertEqual(numbers(after: "up ", in: publisher.stdout), Array(0..<count), "every line of ann's pipe, in order")
        XCTAssertFalse((publisher.stdout + ann.stdout).contains { $0.contains("too-slow") || $0.contains("not_sent") }, "nobody was cut off")
        leave([ann], publisher)
    }

    /// A member that stops reading (SIGSTOP) while 12 MB are piped into the room: the
    /// publisher's `send` waits at the member's outbox mark instead of letting it pass the
    /// 4 MiB limit that closes the link; once the member reads again, every line comes.
    func testAPipeIntoTheRoomWaitsForAMemberThatStoppedReadingAndLosesNothing() throws {
        let name = TestLAN.uniqueName("paced")
        let publisher = try publish(name)
        let ann = try join(name, as: "ann")
        XCTAssertNotNil(ann.waitForEvent(where: event("joined")), ann.transcript)
        ann.signal(SIGSTOP)
        let padding = String(repeating: "p", count: 2000)
        let count = 6000
        // The publisher reads its input only as fast as ann takes it: written from a thread of
        // its own, since the pipe fills and the writes block meanwhile.
        let written = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for index in 0..<count { publisher.send("held \(index) \(padding)") }
            written.signal()
        }
        Thread.sleep(forTimeInterval: 4)
        XCTAssertEqual(written.wait(timeout: .now()), .timedOut, "the publisher read all its input while ann read nothing")
        XCTAssertFalse(publisher.stdout.contains { $0.contains("\"left\"") }, "ann was not cut off")
        ann.signal(SIGCONT)
        // Every line reaches ann, in order. Her own standard output, flooded once she runs
        // again, may drop lines with a count (svc-connect never lets a slow terminal hold the
        // room up): printed and not written add up to every line.
        func notWritten() -> Int {
            ann.stderr.compactMap { line -> Int? in
                // "svc-connect: 1679 lines were not written to standard output because ..."
                guard let range = line.range(of: " not written to standard output") else { return nil }
                return Int(line[..<range.lowerBound].split(separator: " ").dropLast(2).last ?? "")
            }.reduce(0, +)
        }
        let deadline = Date().addingTimeInterval(120)
        while numbers(after: "held ", in: ann.stdout).count + notWritten() < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        let got = numbers(after: "held ", in: ann.stdout)
        XCTAssertEqual(got.count + notWritten(), count, "every line reached ann: \(got.count) printed, \(notWritten()) not written; " + ann.stderr.joined(separator: "\n"))
        XCTAssertEqual(got, got.sorted(), "in order")
        XCTAssertEqual(written.wait(timeout: .now() + 10), .success, "the publisher read all its input")
        XCTAssertFalse(ann.stdout.contains { $0.contains("\"disconnected\"") || $0.contains("\"reconnecting\"") }, "ann's link stayed up")
        XCTAssertFalse(publisher.stdout.contains { $0.contains("\"left\"") }, "ann was not cut off")
        leave([ann], publisher)
    }
}
