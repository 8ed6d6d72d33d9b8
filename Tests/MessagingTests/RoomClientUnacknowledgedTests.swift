import Dispatch
import DiscoveryCore
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A room that stays connected but acknowledges nothing while `send`s wait for it (review
/// attacks15y, finding 3): after the confirmation timeout the connection is handled as lost,
/// the client reconnects and sends the unacknowledged lines again, and gives up after the
/// reconnect limit with a reason that says the room acknowledged nothing. A room that
/// acknowledges, however slowly, keeps its connection.
final class RoomClientUnacknowledgedTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.client.unacknowledged")
    let scheduler = ManualScheduler()
    let opened = Locked<[InMemoryStream]>([])
    let events = Locked<[RoomClient.Event]>([])
    /// Each 50-byte line weighs 66: in a window of 100, a second waits until the first is confirmed.
    static let first = String(repeating: "a", count: 50)
    static let second = String(repeating: "b", count: 50)

    /// A client that reconnects after 1 s and 2 s (two attempts), with a confirmation timeout
    /// of 2 s and a heartbeat far longer, so only the missing acknowledgements end a connection.
    func makeClient(maximumBytesInFlight: Int = 100) -> RoomClient {
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "alice")
        options.maximumBytesInFlight = maximumBytesInFlight
        options.confirmationTimeout = .seconds(2)
        options.heartbeatInterval = .seconds(60)
        options.backoffInitial = .seconds(1)
        options.backoffMaximum = .seconds(2)
        let client = RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { [scheduler, opened] _, _ in
            let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 4242)
            let (client, server) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, nil))
            opened.withLock { $0.append(server) }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        })
        Task { [events] in for await event in client.events { events.withLock { $0.append(event) } } }
        return client
    }

    /// Runs the client's pending work, moving the clock by `step` each time, until `condition`
    /// holds (on the client's queue).
    func pump(_ what: String, step: Duration = .zero, until condition: () -> Bool) async throws {
        for _ in 0..<3000 {
            if queue.sync(execute: { scheduler.advance(by: step); return condition() }) { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        XCTFail("timed out waiting for \(what)")
        throw TimedOut()
    }

    /// Answers connection `index` as a room that acknowledges text (it may choose not to).
    func join(_ client: RoomClient, connection index: Int, capabilities: Message.Capabilities = .all) async throws -> RawPeer {
        let joining = index == 0 ? Task { try await client.connect() } : nil
        try await pump("connection \(index)", step: .milliseconds(250)) { opened.withLock { $0.count > index } }
        let server = queue.sync { RawPeer(opened.withLock { $0[index] }) }
        try await pump("HELLO") { server.messages.contains { if case .hello = $0 { true } else { false } } }
        queue.sync {
            server.send(.hello(.init(capabilities: capabilities, name: "room")))
            server.send(.welcome(name: "alice"))
            scheduler.run()
        }
        try await withTimeout("the join") { try await joining?.value }
        return server
    }

    func texts(_ server: RawPeer) -> [String] {
        server.messages.compactMap { if case .text(_, _, let text) = $0 { text } else { nil } }
    }

    func disconnections() -> [String] {
        events.withLock { $0.compactMap { if case .disconnected(let reason) = $0 { reason } else { nil } } }
    }

    func testARoomThatAcknowledgesNothingWhileASendWaitsIsReconnectedToAndFinallyGivenUp() async throws {
        let client = makeClient()
        let (first, second) = (Self.first, Self.second)
        let server = try await join(client, connection: 0)
        try await withTimeout("the first send") { try await client.send(.say(first)) }
        let outcome = Task { await client.run() }
        let sending = Task { try await client.send(.say(second)) } // waits for the window
        try await pump("the first line") { texts(server) == [first] }
        try await pump("the watch on the waiting send") { client.acknowledgementWatch != nil }

        // Just under the timeout nothing happens; at the timeout the link is dropped as lost.
        try await pump("1.9 s") { scheduler.advance(by: .milliseconds(1900)); return true }
        XCTAssertTrue(queue.sync { server.closeReason == nil }, "the room still had time")
        try await pump("the drop", step: .milliseconds(50)) { server.closeReason != nil }
        let reason = "the room acknowledged none of the text sent for 2 s while more waited to be sent"
        try await pump("the disconnection") { disconnections() == [reason] }

        // The reconnect sends the unacknowledged line again, under its number; the second still waits.
        let again = try await join(client, connection: 1)
        try await pump("the line sent again") { texts(again) == [first] }
        XCTAssertTrue(queue.sync { again.messages.contains { if case .session(_, next: 0) = $0 { true } else { false } } })

        // Still nothing acknowledged: dropped again, the second and last attempt likewise, then given up.
        try await pump("the second drop", step: .milliseconds(250)) { again.closeReason != nil }
        let last = try await join(client, connection: 2)
        try await pump("the third drop", step: .milliseconds(250)) { last.closeReason != nil }
        try await pump("the end", step: .milliseconds(250)) { client.isOver }
        let ended = try await withTimeout("the outcome") { await outcome.value }
        guard case .failed(let message) = ended else { return XCTFail("\(ended)") }
        XCTAssertTrue(message.hasPrefix("gave up reconnecting after 2 attempts"), message)
        XCTAssertTrue(message.hasSuffix("; the last connection was closed because " + reason), message)
        do {
            try await withTimeout("the waiting send") { try await sending.value }
            XCTFail("the waiting send returned as if queued")
        } catch is RoomClient.SessionEnded {}
        XCTAssertEqual(opened.withLock { $0.count }, 3, "one connection and two attempts")
        let notSent = events.withLock { $0.compactMap { if case .notSent(let what) = $0 { what } else { nil } } }
        XCTAssertEqual(notSent, [first + " (sent, but the server never confirmed it)"])
    }

    func testARoomThatAcknowledgesSlowlyKeepsItsConnection() async throws {
        let client = makeClient()
        let server = try await join(client, connection: 0)
        let lines = (0..<6).map { String(repeating: "\($0)", count: 50) }
        let sending = Task { for line in lines { try await client.send(.say(line)) } }
        // Each line is confirmed 1.5 s after it came: 9 s in all, each under the 2 s timeout.
        for index in 0..<lines.count {
            try await pump("line \(index)") { texts(server).count == index + 1 }
            try await pump("1.5 s") { scheduler.advance(by: .milliseconds(1500)); return true }
            queue.sync { _ = server.send(.acknowledged(through: UInt64(index + 1))) }
        }
        try await withTimeout("the sends") { try await sending.value }
        try await pump("the last acknowledgement") { client.link != nil }
        queue.sync {
            XCTAssertEqual(texts(server), lines)
            XCTAssertNil(server.closeReason, "a room that acknowledges keeps its connection")
        }
        XCTAssertEqual(disconnections(), [])
        XCTAssertEqual(opened.withLock { $0.count }, 1)
        client.stop()
    }

    func testWithNoSendWaitingAnUnacknowledgedLineEndsNothingBeforeInputEnds() async throws {
        let client = makeClient()
        let first = Self.first
        let server = try await join(client, connection: 0)
        try await withTimeout("the send") { try await client.send(.say(first)) }
        try await pump("the line") { texts(server) == [first] }
        // The producer is idle: the room may take its time (the window only stops a producer).
        try await pump("10 s") { scheduler.advance(by: .seconds(10)); return true }
        queue.sync { XCTAssertNil(server.closeReason) }
        XCTAssertEqual(disconnections(), [])
        client.stop()
    }
}
