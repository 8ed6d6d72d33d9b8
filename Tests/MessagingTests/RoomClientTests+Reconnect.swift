import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Reconnecting and rejoining: a room that comes back on another host (it may be someone
/// else's), and servers that let us in and drop us again at once.
extension RoomClientTests {
    func hostChanges() -> [(now: String, was: String)] {
        events.withLock { $0.compactMap { if case .hostChanged(_, let now, let was) = $0 { (now.addressWithScope, was.addressWithScope) } else { nil } } }
    }

    func notSent() -> [String] {
        events.withLock { $0.compactMap { if case .notSent(let what) = $0 { what } else { nil } } }
    }

    /// Moves the manual clock in steps of 250 ms until the client opened `count` streams.
    func waitForConnection(_ count: Int) async throws {
        try await pump("connection \(count)") {
            scheduler.advance(by: .milliseconds(250))
            return opened.withLock { $0.count == count }
        }
    }

    func testAReconnectToAnotherHostWarnsAndSendsItNothingQueuedForTheOldRoom() async throws {
        let client = makeClient()
        let first = try await join(client)
        client.submit(.say("in doubt"))
        try await pump("the line") { texts(first).count == 1 }
        queue.sync { first.stream.close() }
        try await pump("the drop") { count { if case .disconnected = $0 { true } else { false } } == 1 }
        client.submit(.message(to: "olga", text: "the wifi password is hunter2"))
        client.submit(.send(to: "olga", path: "notes.txt"))
        client.submit(.say("typed while away"))

        host.withLock { $0 = IPAddress(bytes: [10, 0, 0, 9])! } // the publisher is gone; someone else answers
        try await waitForConnection(2)
        let second = try await join(client, connection: 1)
        XCTAssertEqual(hostChanges().map { [$0.now, $0.was] }, [["10.0.0.9", "10.0.0.1"]])
        let because = " (it was for the room on 10.0.0.1, which now answers from another host)"
        XCTAssertEqual(notSent(), ["in doubt", "/msg olga the wifi password is hunter2", "typed while away", "file notes.txt"].map { $0 + because })
        client.submit(.say("after the warning"))
        try await pump("the new line") { texts(second).count == 1 }
        XCTAssertEqual(queue.sync { texts(second) }, ["after the warning"], "only what was typed after the warning")
        XCTAssertFalse(queue.sync { second.messages.contains { if case .fileOffer = $0 { true } else { false } } })

        // The new host is the room's host from now on: coming back from it is not news.
        queue.sync { second.stream.close() }
        try await waitForConnection(3)
        _ = try await join(client, connection: 2)
        XCTAssertEqual(hostChanges().count, 1)
    }

    func testAReconnectToTheSameHostSaysNothingAndSendsWhatWasQueued() async throws {
        let client = makeClient()
        let first = try await join(client)
        queue.sync { first.stream.close() }
        try await pump("the drop") { count { if case .disconnected = $0 { true } else { false } } == 1 }
        client.submit(.message(to: "olga", text: "hi"))
        try await waitForConnection(2)
        let second = try await join(client, connection: 1)
        try await pump("the queued line") { texts(second) == ["hi"] }
        XCTAssertTrue(hostChanges().isEmpty)
        XCTAssertTrue(notSent().isEmpty)
    }

    func testARoomThatComesBackOnAnotherHostIsRejoinedWithAWarningAndWithoutTheLinesTypedMeanwhile() async throws {
        let client = makeClient(waitsForRoom: true)
        let first = try await join(client)
        closeRoom(first)
        try await pump("the room-closed event") { count { if case .roomClosed = $0 { true } else { false } } == 1 }
        client.submit(.say("typed while the room was away"))
        host.withLock { $0 = IPAddress(bytes: [10, 0, 0, 9])! }
        try await waitForConnection(2)
        let second = try await join(client, connection: 1)
        XCTAssertEqual(hostChanges().count, 1)
        XCTAssertEqual(notSent(), ["typed while the room was away (it was for the room on 10.0.0.1, which now answers from another host)"])
        XCTAssertTrue(queue.sync { texts(second) }.isEmpty)
    }

    /// Lets the client in on connection `index` and drops it at once, as a flapping server does.
    func welcomeAndDrop(_ client: RoomClient, connection index: Int, goodbye: Bool = false) async throws {
        let server = try await join(client, connection: index)
        if goodbye { closeRoom(server) } else { queue.sync { server.stream.close() } }
    }

    func reconnectDelays() -> [(delay: Duration, attempt: Int)] {
        events.withLock { $0.compactMap { if case .reconnecting(let delay, let attempt) = $0 { (delay, attempt) } else { nil } } }
    }

    func testAServerThatLetsUsInAndDropsUsAtOnceIsGivenUpOnAfterTheAttempts() async throws {
        let client = makeClient() // backoff 1, 2, 4 s: three attempts
        try await welcomeAndDrop(client, connection: 0)
        for connection in 1...3 {
            try await waitForConnection(connection + 1)
            try await welcomeAndDrop(client, connection: connection)
        }
        let outcome = try await outcome(of: client)
        XCTAssertEqual(outcome, .failed("gave up reconnecting after 3 attempts (the count starts again only after a connection stays up 30 s)"))
        let delays = reconnectDelays()
        XCTAssertEqual(delays.map(\.attempt), [1, 2, 3], "the attempts count on across connections that did not last")
        for (delay, base) in zip(delays.map(\.delay), [1, 2, 4]) {
            XCTAssertLessThanOrEqual(delay, .seconds(base))
            XCTAssertGreaterThanOrEqual(delay, .seconds(base) * 0.8)
        }
        XCTAssertEqual(opened.withLock { $0.count }, 4)
    }

    func testAConnectionThatStaysUpStartsTheBackoffAgain() async throws {
        let client = makeClient()
        try await welcomeAndDrop(client, connection: 0)
        try await waitForConnection(2)
        let second = try await join(client, connection: 1)
        queue.sync { scheduler.advance(by: .seconds(30)) } // stable: heartbeats only
        queue.sync { second.stream.close() }
        try await waitForConnection(3)
        XCTAssertEqual(reconnectDelays().map(\.attempt), [1, 1])
        XCTAssertLessThanOrEqual(reconnectDelays().last?.delay ?? .zero, .seconds(1))
    }

    func testARoomThatKeepsClosingRightAfterTakingUsBackIsLookedForLessAndLessOften() async throws {
        let client = makeClient(waitsForRoom: true)
        try await welcomeAndDrop(client, connection: 0, goodbye: true)
        for connection in 1...6 {
            try await waitForConnection(connection + 1)
            try await welcomeAndDrop(client, connection: connection, goodbye: connection < 6)
        }
        let times = looks.withLock { $0 }
        let pauses = zip(times, times.dropFirst()).map { $1 - $0 }
        for (pause, expected) in zip(pauses, [2, 4, 8, 16, 32, 32]) {
            XCTAssertGreaterThanOrEqual(pause, .seconds(expected))
            // The clock moves in steps of 250 ms, some before the pause starts.
            XCTAssertLessThanOrEqual(pause, .seconds(expected) + .seconds(1))
        }
        XCTAssertEqual(pauses.count, 6)
        client.stop()
        _ = try await outcome(of: client)
    }

    func testARoomThatStayedOpenIsLookedForEvery2sAgain() async throws {
        let client = makeClient(waitsForRoom: true)
        try await welcomeAndDrop(client, connection: 0, goodbye: true)
        try await waitForConnection(2)
        try await welcomeAndDrop(client, connection: 1, goodbye: true) // quick: the next pause is 4 s
        try await waitForConnection(3)
        let third = try await join(client, connection: 2)
        queue.sync { scheduler.advance(by: .seconds(30)) }
        closeRoom(third)
        try await waitForConnection(4)
        let times = looks.withLock { $0 }
        XCTAssertLessThanOrEqual(times[3] - times[2], .seconds(30) + .seconds(3), "30 s in the room, then 2 s (not 8 s)")
        XCTAssertGreaterThanOrEqual(times[2] - times[1], .seconds(4))
        client.stop()
        _ = try await outcome(of: client)
    }
}
