@testable import Messaging
import MessagingCore
import MessagingTesting
import XCTest

/// The event buffer is bounded in bytes too (review attacks16, finding 5): a room sending
/// PRESENCE frames of thousands of names stops being read long before 256 of them pile up.
extension RoomClientAsyncTests {
    func testLargeEventsStopTheReadingAtTheBufferedBytesLongBeforeTheEventLimit() async throws {
        let client = makeClient()
        let server = try await join(client)
        // Each frame: 8,000 names of 30 bytes (members' names take at most 32), weighing 94
        // bytes each: 23 such events pass 16 MiB.
        let names = (0..<8000).map { Message.PresenceMember(name: String(repeating: "n", count: 26) + String(10000 + $0).dropFirst(), key: nil) }
        // Sent one at a time (the server's outbox holds 4 MiB), until the client stops reading.
        var sent = 0
        while sent < 100, !queue.sync(execute: { client.eventBuffer.isPressing }) {
            queue.sync {
                server.send(.presenceWithKeys(.joined, members: names))
                for _ in 0..<10 { scheduler.run() }
            }
            sent += 1
        }
        queue.sync {
            XCTAssertTrue(client.eventBuffer.isPressing, "the buffer presses")
            XCTAssertLessThanOrEqual(client.eventBuffer.count, 30, "the buffer stops at its bytes, not at 256 events")
            for _ in 0..<4 { server.send(.presenceWithKeys(.joined, members: names)) }
            for _ in 0..<10 { scheduler.run() }
            XCTAssertGreaterThan(server.stream.bufferedByteCount, 0, "what came later waits in the server's outbox, unread")
        }
        sent += 4
        // A consumer arrives: reading goes on, and every frame comes.
        let events = Locked<[RoomClient.Event]>([])
        let ended = Locked(false)
        _ = consume(client, into: events, ended: ended)
        try await pump("every frame") { events.withLock { $0.filter { if case .presence = $0 { true } else { false } }.count } == sent }
        queue.sync { XCTAssertFalse(client.eventBuffer.isPressing) }
        client.stop()
        try await pump("the end of the events") { scheduler.advance(by: .seconds(1)); return ended.withLock { $0 } }
    }
}
