import Dispatch
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// `RoomClient.send` waits for the connection's outbox too: against a server that does not
/// acknowledge text (the flow window then frees each line as it is queued) and does not read,
/// sends stop at the outbox's mark instead of filling it to its limit and losing the link.
extension RoomClientAsyncTests {
    /// 32 KiB lines: 33 of them pass the 1 MiB mark.
    static let longLine = String(repeating: "x", count: 32 << 10)

    /// Joins a server too old to acknowledge text, which stops reading; returns its end.
    func joinSilentServer(_ client: RoomClient) async throws -> RawPeer {
        let server = try await join(client, capabilities: [])
        queue.sync { server.stream.pauseReading() }
        return server
    }

    /// Sends `count` long lines one after another from a task; `sent` counts those that returned.
    func sendLines(_ client: RoomClient, count: Int, sent: Locked<Int>) -> Task<Void, any Error> {
        let line = Self.longLine
        return Task {
            for index in 0..<count {
                try await client.send(.say("\(index) " + line))
                sent.withLock { $0 += 1 }
            }
        }
    }

    func testSendWaitsAtTheOutboxMarkOfAServerThatNeitherAcknowledgesNorReadsAndResumesWhenItDrains() async throws {
        let client = makeClient()
        let server = try await joinSilentServer(client)
        let sent = Locked(0)
        let sending = sendLines(client, count: 100, sent: sent)
        // The sends stop once the outbox passes its mark, far below the 4 MiB that closes the link.
        try await pump("the outbox to pass its mark") { (client.link?.connection.bufferedByteCount ?? 0) > RoomClient.outboxMark }
        for _ in 0..<20 { queue.sync { _ = scheduler.run() }; try await Task.sleep(for: .milliseconds(1)) }
        let stalled = sent.withLock { $0 }
        XCTAssertLessThan(stalled, 100, "send waits while the outbox is over its mark")
        queue.sync {
            let buffered = client.link?.connection.bufferedByteCount ?? 0
            XCTAssertLessThanOrEqual(buffered, RoomClient.outboxMark + Self.longLine.utf8.count + 64, "at most one line passes the mark")
            XCTAssertTrue(client.link?.isOpen ?? false, "the link stays up")
        }
        // The server reads again: the outbox drains, and every line comes, in order.
        queue.sync { server.stream.resumeReading() }
        try await pump("every line") { texts(server).count == 100 }
        try await withTimeout("the sends") { try await sending.value }
        XCTAssertEqual(texts(server).map { $0.prefix { $0 != " " } }, (0..<100).map { Substring("\($0)") })
        client.stop()
    }

    func testASendWaitingForTheOutboxIsCancelledCleanly() async throws {
        let client = makeClient()
        let server = try await joinSilentServer(client)
        let sent = Locked(0)
        let filling = sendLines(client, count: 40, sent: sent)
        try await pump("the outbox to pass its mark") { (client.link?.connection.bufferedByteCount ?? 0) > RoomClient.outboxMark }
        for _ in 0..<20 { queue.sync { _ = scheduler.run() }; try await Task.sleep(for: .milliseconds(1)) }
        let before = sent.withLock { $0 }
        filling.cancel()
        do {
            try await withTimeout("the cancelled send") { try await filling.value }
            XCTFail("a cancelled send returned as if queued")
        } catch is CancellationError {}
        XCTAssertEqual(sent.withLock { $0 }, before, "the cancelled line was not counted as sent")
        // Nothing of the cancelled line goes: once the outbox drains, the next send is the next line.
        queue.sync { server.stream.resumeReading() }
        try await pump("the lines sent before") { texts(server).count == before }
        try await withTimeout("the next send") { try await client.send(.say("next")) }
        try await pump("the next line") { texts(server).last == "next" }
        XCTAssertEqual(texts(server).count, before + 1)
        client.stop()
    }

    func testASendWaitingForTheOutboxFailsWithSessionEndedWhenTheSessionEnds() async throws {
        let client = makeClient()
        _ = try await joinSilentServer(client)
        let sent = Locked(0)
        let filling = sendLines(client, count: 40, sent: sent)
        try await pump("the outbox to pass its mark") { (client.link?.connection.bufferedByteCount ?? 0) > RoomClient.outboxMark }
        client.stop()
        // The server reads nothing: the link is cut after its goodbye grace, and the session ends.
        try await pump("the session to end") { scheduler.advance(by: .seconds(1)); return client.isOver }
        do {
            try await withTimeout("the waiting send") { try await filling.value }
            XCTFail("a send waiting when the session ended returned as if queued")
        } catch is RoomClient.SessionEnded {}
        let outcome = try await withTimeout("the outcome") { await client.run() }
        XCTAssertEqual(outcome, .interrupted)
    }
}

/// Whether "delivered" means confirmed (review attacks16, finding 1: svc-connect said
/// "everything sent was delivered" for lines a room that does not acknowledge never read).
extension RoomClientAsyncTests {
    func testOnlyARoomThatAcknowledgesTextConfirmsIt() async throws {
        let old = makeClient()
        _ = try await joinSilentServer(old)
        let confirmsOld = await old.roomConfirmsText
        XCTAssertFalse(confirmsOld)
        old.stop()
        opened.withLock { $0.removeAll() }
        let current = makeClient()
        _ = try await join(current)
        let confirmsCurrent = await current.roomConfirmsText
        XCTAssertTrue(confirmsCurrent)
        current.stop()
    }
}
