import Dispatch
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A hostile room that holds the producer by other means than acknowledging nothing (review
/// attacks16, finding 1): an `ACK` beyond anything sent is a protocol violation that ends the
/// connection, and a room with nothing left to acknowledge (it does not acknowledge text, or
/// claimed everything) whose outbox does not move while sends wait is dropped as stalled.
extension RoomClientUnacknowledgedTests {
    func testAnAcknowledgementOfTextNeverSentIsRefusedAndTheConnectionHandledAsLost() async throws {
        let client = makeClient()
        let server = try await join(client, connection: 0)
        try await withTimeout("the send") { try await client.send(.say(Self.first)) }
        try await pump("the line") { texts(server) == [Self.first] }
        queue.sync { _ = server.send(.acknowledged(through: UInt64.max)) }
        let what = "ACK through \(UInt64.max) acknowledges text never sent (the next line is number 1)"
        try await pump("the drop within 1 s", step: .milliseconds(100)) { server.closeReason != nil }
        try await pump("the disconnection") { disconnections() == ["the room broke the protocol: " + what] }
        XCTAssertTrue(queue.sync { server.messages.contains { if case .error(5, what) = $0 { true } else { false } } },
                      "the room is told what it did wrong")
        // The line was not confirmed: the next connection gets it again, under its number.
        let again = try await join(client, connection: 1)
        try await pump("the line sent again") { texts(again) == [Self.first] }
        client.stop()
    }

    /// Review attacks18, N2: a room that reads nothing kept the connection by acknowledging one
    /// line further than before in each confirmation timeout, lines still in our outbox.
    func testAnAcknowledgementOfALineStillInTheOutboxIsRefused() async throws {
        let client = makeClient()
        let server = try await join(client, connection: 0)
        queue.sync { server.stream.pauseReading() }
        try await withTimeout("the send") { try await client.send(.say(Self.first)) }
        try await pump("the line queued") { (client.link?.connection.bufferedByteCount ?? 0) > 0 }
        queue.sync { _ = server.send(.acknowledged(through: 1)) }
        let what = "ACK through 1 acknowledges line 0, which the room has not all received yet"
        try await pump("the drop within 1 s", step: .milliseconds(100)) { server.closeReason != nil }
        try await pump("the disconnection") { disconnections() == ["the room broke the protocol: " + what] }
        // Not confirmed: the next connection gets the line again, and its acknowledgement, once
        // the line was read, is taken.
        let again = try await join(client, connection: 1)
        try await pump("the line sent again") { texts(again) == [Self.first] }
        queue.sync { _ = again.send(.acknowledged(through: 1)) }
        try await pump("1.5 s") { scheduler.advance(by: .milliseconds(1500)); return true }
        XCTAssertTrue(queue.sync { again.closeReason == nil }, "an acknowledgement of what was read is kept")
        XCTAssertEqual(disconnections().count, 1)
        client.stop()
    }

    /// Joins a room that acknowledges text, lets it read three 32 KiB lines, stops its
    /// reading, and sends 32 KiB lines from a task until they wait for the outbox, watched.
    func fillTheOutboxOfARoomThatStoppedReading() async throws -> (RoomClient, RawPeer, Task<Void, any Error>) {
        let client = makeClient(maximumBytesInFlight: 8 << 20)
        let server = try await join(client, connection: 0)
        let line = String(repeating: "x", count: 32 << 10)
        for index in 0..<3 { try await withTimeout("line \(index)") { try await client.send(.say("\(index) " + line)) } }
        try await pump("the three lines read") { texts(server).count == 3 }
        queue.sync { server.stream.pauseReading() }
        let sending = Task { for index in 3..<100 { try await client.send(.say("\(index) " + line)) } }
        try await pump("the outbox to pass its mark") { (client.link?.connection.bufferedByteCount ?? 0) > RoomClient.outboxMark }
        try await pump("the watch on the waiting send") { client.acknowledgementWatch != nil }
        return (client, server, sending)
    }

    /// Review attacks18, N2, the other half: acknowledging, one at a time, lines that left our
    /// outbox but that the room never read (they can wait in the kernels' buffers) does not
    /// count as progress while the room reads none of what waits in the outbox.
    func testARoomThatAcknowledgesLinesButReadsNoneOfTheOutboxIsDroppedAsStalled() async throws {
        let (client, server, sending) = try await fillTheOutboxOfARoomThatStoppedReading()
        for through in 1...3 {
            try await pump("0.6 s") { scheduler.advance(by: .milliseconds(600)); return true }
            guard queue.sync(execute: { server.closeReason == nil }) else { break }
            queue.sync { _ = server.send(.acknowledged(through: UInt64(through))) }
        }
        // The first acknowledgement counts (the room read three lines since the join) and sets
        // the watch again, at 0.6 s; the others do not: dropped 2 s later, at 2.6 s.
        try await pump("0.9 s") { scheduler.advance(by: .milliseconds(900)); return true }
        try await pump("the drop") { server.closeReason != nil }
        try await pump("the disconnection") {
            disconnections() == ["the room acknowledged lines but read none of the text waiting to be sent for 2 s"]
        }
        sending.cancel()
        client.stop()
    }

    /// Review attacks19 (B): when the watch ended at a moment no send waited (an ACK had just
    /// let one through, on its way back), the next waiting send began a fresh period, and a
    /// room that read nothing was held for a period more each time.
    func testUncountedAcknowledgementsAreJudgedAlsoWhenNoSendWaitsAtTheEnd() async throws {
        let (client, server, sending) = try await fillTheOutboxOfARoomThatStoppedReading()
        try await pump("0.6 s") { scheduler.advance(by: .milliseconds(600)); return true }
        queue.sync { _ = server.send(.acknowledged(through: 1)) } // counts: the room read three lines since the join
        try await pump("the watch set again") { client.acknowledgementWatch != nil }
        sending.cancel()
        try await pump("no send waits") { !client.sendsWait }
        for through in 2...3 {
            try await pump("0.6 s") { scheduler.advance(by: .milliseconds(600)); return true }
            queue.sync { _ = server.send(.acknowledged(through: UInt64(through))) }
        }
        try await pump("0.9 s") { scheduler.advance(by: .milliseconds(900)); return true }
        try await pump("the drop") { server.closeReason != nil }
        try await pump("the disconnection") {
            disconnections() == ["the room acknowledged lines but read none of the text waiting to be sent for 2 s"]
        }
        client.stop()
    }

    func testARoomThatAcknowledgesAndReadsSomeOfTheOutboxKeepsItsConnection() async throws {
        let (client, server, sending) = try await fillTheOutboxOfARoomThatStoppedReading()
        // In each 1.5 s the room reads a little and acknowledges a line it read.
        for through in 1...4 {
            try await pump("1.2 s") { scheduler.advance(by: .milliseconds(1200)); return true }
            queue.sync { server.stream.resumeReading() }
            try await pump("some reading") { scheduler.run(); return true }
            queue.sync { server.stream.pauseReading() }
            try await pump("0.3 s") { scheduler.advance(by: .milliseconds(300)); return true }
            queue.sync { _ = server.send(.acknowledged(through: UInt64(through))) }
        }
        try await pump("1 s") { scheduler.advance(by: .seconds(1)); return true }
        XCTAssertTrue(queue.sync { server.closeReason == nil }, "a room that reads and acknowledges keeps its connection")
        XCTAssertEqual(disconnections(), [])
        sending.cancel()
        client.stop()
    }

    /// Joins a room that does not acknowledge text and stops reading, and sends 32 KiB lines
    /// from a task until they wait for the outbox, watched.
    func fillTheOutboxOfARoomThatDoesNotAcknowledge() async throws -> (RoomClient, RawPeer, Task<Void, any Error>) {
        let client = makeClient(maximumBytesInFlight: 8 << 20)
        let server = try await join(client, connection: 0, capabilities: [])
        queue.sync { server.stream.pauseReading() }
        let line = String(repeating: "x", count: 32 << 10)
        let sending = Task { for index in 0..<100 { try await client.send(.say("\(index) " + line)) } }
        try await pump("the outbox to pass its mark") { (client.link?.connection.bufferedByteCount ?? 0) > RoomClient.outboxMark }
        try await pump("the watch on the waiting send") { client.acknowledgementWatch != nil }
        return (client, server, sending)
    }

    func testARoomThatDoesNotAcknowledgeAndReadsNothingWhileSendsWaitIsDroppedAsStalled() async throws {
        let (client, server, sending) = try await fillTheOutboxOfARoomThatDoesNotAcknowledge()
        // Nothing to acknowledge and the outbox does not move: dropped at the confirmation timeout.
        try await pump("1.9 s") { scheduler.advance(by: .milliseconds(1900)); return true }
        XCTAssertTrue(queue.sync { server.closeReason == nil }, "the room still had time")
        try await pump("the drop", step: .milliseconds(50)) { server.closeReason != nil }
        try await pump("the disconnection") { disconnections() == ["the room read none of the text waiting to be sent for 2 s"] }
        sending.cancel()
        client.stop()
    }

    func testARoomThatDoesNotAcknowledgeButReadsSlowlyKeepsItsConnection() async throws {
        let (client, server, sending) = try await fillTheOutboxOfARoomThatDoesNotAcknowledge()
        // The room reads a little in each 2 s: the outbox moves, so the connection stays.
        for _ in 0..<3 {
            try await pump("1.5 s") { scheduler.advance(by: .milliseconds(1500)); return true }
            queue.sync { server.stream.resumeReading() }
            try await pump("some reading") { scheduler.run(); return true }
            queue.sync { server.stream.pauseReading() }
            try await pump("0.6 s") { scheduler.advance(by: .milliseconds(600)); return true }
        }
        XCTAssertTrue(queue.sync { server.closeReason == nil }, "a room that reads keeps its connection")
        XCTAssertEqual(disconnections(), [])
        sending.cancel()
        client.stop()
    }
}
