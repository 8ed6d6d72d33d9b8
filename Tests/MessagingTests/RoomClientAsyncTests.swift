import Dispatch
import DiscoveryCore
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import TransportPOSIX
import XCTest

/// RoomClient's async API against a hand-driven server on in-memory streams: the event
/// sequence (order, a slow consumer pausing the reads, cancellation, the end) and `send`
/// (suspending on a full flow window, resuming on acknowledgement, cancellation).
final class RoomClientAsyncTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.client.async")
    let scheduler = ManualScheduler()
    let opened = Locked<[InMemoryStream]>([])

    func makeClient(eventBufferLimit: Int = 256, maximumBytesInFlight: Int = 1 << 20) -> RoomClient {
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "alice")
        options.reconnect = false
        options.eventBufferLimit = eventBufferLimit
        options.maximumBytesInFlight = maximumBytesInFlight
        return RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { [scheduler, opened] _, _ in
            let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 4242)
            let (client, server) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, nil))
            opened.withLock { $0.append(server) }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        })
    }

    /// Runs the client's pending work until `condition` holds (on the client's queue).
    func pump(_ what: String, until condition: () -> Bool) async throws {
        try await drive(what, on: queue, scheduler, until: condition)
    }

    /// Connects and answers as a server that acknowledges text; returns the server's end.
    /// Nothing takes the client's events meanwhile.
    func join(_ client: RoomClient, capabilities: Message.Capabilities = .all) async throws -> RawPeer {
        let joining = Task { try await client.connect() }
        try await pump("the client to connect") { opened.withLock { !$0.isEmpty } }
        let server = queue.sync { RawPeer(opened.withLock { $0[0] }) }
        try await pump("HELLO") { server.messages.contains { if case .hello = $0 { true } else { false } } }
        queue.sync {
            server.send(.hello(.init(capabilities: capabilities, name: "room")))
            server.send(.welcome(name: "alice"))
            scheduler.run()
        }
        try await withTimeout("the join") { try await joining.value }
        return server
    }

    /// The client's next event, taken by a fresh iterator (they hold no state), bounded.
    func nextEvent(_ client: RoomClient) async throws -> RoomClient.Event? {
        try await withTimeout("the next event") {
            var iterator = client.events.makeAsyncIterator()
            return await iterator.next()
        }
    }

    func texts(_ server: RawPeer) -> [String] {
        server.messages.compactMap { if case .text(_, _, let text) = $0 { text } else { nil } }
    }

    /// Takes events from `client` into `into` until the sequence ends; sets `ended` then.
    func consume(_ client: RoomClient, into events: Locked<[RoomClient.Event]>, ended: Locked<Bool>) -> Task<Void, Never> {
        Task {
            for await event in client.events { events.withLock { $0.append(event) } }
            ended.withLock { $0 = true }
        }
    }

    static func receivedTexts(_ events: [RoomClient.Event]) -> [String] {
        events.compactMap { if case .text(_, _, let text) = $0 { text } else { nil } }
    }

    func testEventsComeInOrderAndTheSequenceEndsWhenTheRoomCloses() async throws {
        let client = makeClient()
        let events = Locked<[RoomClient.Event]>([])
        let ended = Locked(false)
        _ = consume(client, into: events, ended: ended)
        let server = try await join(client)
        queue.sync {
            for index in 0..<50 { server.send(.text(from: "bob", to: "", text: "\(index)")) }
            server.send(.goodbye(reason: "closing"))
            scheduler.run()
            server.stream.close()
            scheduler.run()
        }
        let outcome = try await withTimeout("the session's outcome") { await client.run() }
        XCTAssertEqual(outcome, .closedByServer("said goodbye: closing"))
        try await pump("the end of the events") { ended.withLock { $0 } }
        let all = events.withLock { $0 }
        XCTAssertEqual(Self.receivedTexts(all), (0..<50).map(String.init))
        guard case .connected = all.first, case .disconnected = all.last else { return XCTFail("\(all)") }
    }

    func testASlowConsumerPausesReadingFromTheServerAndLosesNothing() async throws {
        let limit = 8
        let client = makeClient(eventBufferLimit: limit)
        let server = try await join(client)
        // Nobody takes events: the buffer fills to its limit and the client stops reading.
        queue.sync {
            for index in 0..<100 { server.send(.text(from: "bob", to: "", text: "\(index)")) }
        }
        try await pump("the buffer to fill") { client.eventBuffer.isPressing }
        queue.sync {
            for index in 100..<200 { server.send(.text(from: "bob", to: "", text: "\(index)")) }
            for _ in 0..<10 { scheduler.run() }
        }
        queue.sync {
            XCTAssertLessThanOrEqual(client.eventBuffer.count, limit, "the buffer stops at its limit")
            XCTAssertGreaterThan(server.stream.bufferedByteCount, 0, "what the server sent later waits in its outbox, unread")
        }
        // A consumer arrives: reading goes on, and every line comes, in order.
        let events = Locked<[RoomClient.Event]>([])
        let ended = Locked(false)
        _ = consume(client, into: events, ended: ended)
        try await pump("every line") { events.withLock { Self.receivedTexts($0).count } == 200 }
        XCTAssertEqual(events.withLock { Self.receivedTexts($0) }, (0..<200).map(String.init))
        queue.sync {
            XCTAssertFalse(client.eventBuffer.isPressing)
            XCTAssertEqual(server.stream.bufferedByteCount, 0)
        }
        client.stop()
        try await pump("the end of the events") { scheduler.advance(by: .seconds(1)); return ended.withLock { $0 } }
    }

    func testACancelledNextReturnsNilAndTakesNoEvent() async throws {
        let client = makeClient()
        let server = try await join(client)
        // The three events of the join are buffered; take them.
        for _ in 0..<3 { _ = try await nextEvent(client) }
        let waiting = Task { () -> RoomClient.Event? in
            var iterator = client.events.makeAsyncIterator()
            return await iterator.next()
        }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        let cancelled = try await withTimeout("the cancelled next()") { await waiting.value }
        XCTAssertNil(cancelled)
        queue.sync {
            server.send(.text(from: "bob", to: "", text: "after"))
            scheduler.run()
        }
        guard case .text(_, _, "after") = try await nextEvent(client) else { return XCTFail("the line after the cancellation was lost") }
        client.stop()
    }

    func testSendSuspendsWhileTheWindowIsFullAndResumesOnAcknowledgement() async throws {
        // Each 50-byte line weighs 66: the second does not fit in 100 until the first is confirmed.
        let client = makeClient(maximumBytesInFlight: 100)
        let server = try await join(client)
        let first = String(repeating: "a", count: 50)
        let second = String(repeating: "b", count: 50)
        try await withTimeout("the first send") { try await client.send(.say(first)) }
        try await pump("the first line") { texts(server) == [first] }
        let sent = Locked(false)
        let sending = Task {
            try await client.send(.say(second))
            sent.withLock { $0 = true }
        }
        for _ in 0..<20 { queue.sync { _ = scheduler.run() }; try await Task.sleep(for: .milliseconds(1)) }
        XCTAssertFalse(sent.withLock { $0 }, "send waits while the server has not confirmed the first line")
        queue.sync { XCTAssertEqual(texts(server), [first]) }
        queue.sync { _ = server.send(.acknowledged(through: 1)) }
        try await pump("the second line") { texts(server) == [first, second] }
        try await withTimeout("the second send") { try await sending.value }
        XCTAssertTrue(sent.withLock { $0 })
        client.stop()
    }

    func testACancelledSendThrowsAndNothingOfItIsSent() async throws {
        let client = makeClient(maximumBytesInFlight: 100)
        let server = try await join(client)
        let first = String(repeating: "a", count: 50)
        try await withTimeout("the first send") { try await client.send(.say(first)) }
        let sending = Task { try await client.send(.say(String(repeating: "c", count: 50))) } // 66 more: does not fit
        try await Task.sleep(for: .milliseconds(20))
        sending.cancel()
        do {
            try await withTimeout("the cancelled send") { try await sending.value }
            XCTFail("a cancelled send returned as if queued")
        } catch is CancellationError {}
        // The room it would have taken is not held: once the first is confirmed, another fits.
        queue.sync { _ = server.send(.acknowledged(through: 1)) }
        try await pump("the acknowledgement") { true }
        try await withTimeout("the next send") { try await client.send(.say("next")) }
        try await pump("the next line") { texts(server) == [first, "next"] }
        client.stop()
    }

    func testSendAfterTheSessionEndedThrowsSessionEnded() async throws {
        let client = makeClient()
        _ = try await join(client)
        client.stop()
        let result = Task { await client.run() }
        try await pump("the end of the session") { scheduler.advance(by: .seconds(1)); return true }
        for _ in 0..<10 { queue.sync { scheduler.advance(by: .seconds(1)) } }
        let outcome = try await withTimeout("the session's outcome") { await result.value }
        XCTAssertEqual(outcome, .interrupted)
        do {
            try await withTimeout("the late send") { try await client.send(.say("late")) }
            XCTFail("a send after the end returned as if queued")
        } catch is RoomClient.SessionEnded {}
    }
}
