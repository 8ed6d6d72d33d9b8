import Dispatch
import DiscoveryCore
import Messaging
import MessagingCore
import MessagingTesting
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// RoomClient against a hand-driven server on in-memory streams, with a manual clock driven
/// on the client's queue: join, goodbye and a reconnect, without DNS-SD or sockets.
final class RoomClientTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.client")
    let scheduler = ManualScheduler()
    /// Server ends of the streams the client opened, oldest first.
    let opened = Locked<[InMemoryStream]>([])
    let events = Locked<[RoomClient.Event]>([])
    /// The client's event sequence ended.
    let eventsEnded = Locked(false)
    /// Looks for the server that find nobody before the connector opens a stream again.
    let absentLooks = Locked(0)
    /// When the connector was called, on the manual clock.
    let looks = Locked<[ContinuousClock.Instant]>([])
    /// The host the next stream leads to (its address, and the only candidate).
    let host = Locked(IPAddress(bytes: [10, 0, 0, 1])!)
    /// What the client's next stream reports as its secure session (nil: plaintext).
    let secure = Locked<SecureSession?>(nil)

    func makeClient(reconnect: Bool = true, waitsForRoom: Bool = false) -> RoomClient {
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "alice")
        options.reconnect = reconnect
        options.waitsForRoom = waitsForRoom
        options.backoffInitial = .seconds(1)
        options.backoffMaximum = .seconds(4)
        let client = RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { [scheduler, opened, absentLooks, looks, host, secure] _, _ in
            let endpoint = SocketEndpoint(address: host.withLock { $0 }, port: 4242)
            looks.withLock { $0.append(scheduler.now) }
            let absent = absentLooks.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if absent { throw TransportError("connect", message: "nobody answers") }
            let (client, server) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, nil))
            opened.withLock { $0.append(server) }
            client.secureSession = secure.withLock { $0 }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        })
        collectEvents(of: client, into: events, ended: eventsEnded)
        return client
    }

    /// Runs the client's pending work until `condition` holds (on the client's queue).
    func pump(_ what: String, until condition: () -> Bool) async throws {
        try await drive(what, on: queue, scheduler, attempts: 2000, until: condition)
    }

    /// Connects (unless the client reconnects by itself) and answers as a server that
    /// acknowledges text; returns the server's end.
    func join(_ client: RoomClient, connection: Int = 0) async throws -> RawPeer {
        let joining = connection == 0 ? Task { try await client.connect() } : nil
        try await pump("the client to connect") { opened.withLock { $0.count > connection } }
        let server = queue.sync { RawPeer(opened.withLock { $0[connection] }) }
        try await pump("HELLO") { server.messages.contains { if case .hello = $0 { true } else { false } } }
        queue.sync {
            server.send(.hello(.init(name: "room")))
            server.send(.welcome(name: "alice"))
            scheduler.run()
        }
        try await withTimeout("the join") { try await joining?.value }
        try await pump("the welcome") { events.withLock { $0.count { if case .joined = $0 { true } else { false } } } > connection }
        return server
    }

    /// The text lines a server end received (call on the client's queue, e.g. in `pump`).
    func texts(_ server: RawPeer) -> [String] {
        server.messages.compactMap { if case .text(_, _, let text) = $0 { text } else { nil } }
    }

    func testJoinsThenNumbersItsLines() async throws {
        let client = makeClient()
        let server = try await join(client)
        client.submit(.say("hello"))
        client.submit(.message(to: "bob", text: "psst"))
        try await pump("two lines") { texts(server).count == 2 }
        let sessions = queue.sync { server.messages.compactMap { if case .session(let id, let next) = $0 { (id, next) } else { nil } } }
        XCTAssertEqual(sessions.count, 1)
        XCTAssertEqual(sessions.first?.1, 0)
        XCTAssertEqual(queue.sync { texts(server) }, ["hello", "psst"])
        XCTAssertTrue(events.withLock { $0.contains { if case .joined(as: "alice", _) = $0 { true } else { false } } })
    }

    func testReportsTheSecureSessionAndTheKeysPresenceCarries() async throws {
        let roomKey = PublicKeyFingerprint(bytes: [UInt8](repeating: 5, count: 32))!
        let session = SecureSession(peerKey: roomKey, safetyCode: "111 222 333 444")
        secure.withLock { $0 = session }
        let client = makeClient()
        let server = try await join(client)
        XCTAssertTrue(events.withLock { $0.contains { if case .joined(as: "alice", session) = $0 { true } else { false } } })
        let advertised = queue.sync { server.messages.compactMap { if case .hello(let hello) = $0 { hello.capabilities } else { nil } } }
        XCTAssertEqual(advertised.map { $0.contains(.memberKeys) }, [true])
        queue.sync {
            server.send(.presenceWithKeys(.list, members: [.init(name: "room", key: roomKey.bytes), .init(name: "alice", key: nil)]))
            scheduler.run()
        }
        try await pump("the list") { events.withLock { $0.contains { if case .presence = $0 { true } else { false } } } }
        let lists = events.withLock { $0.compactMap { if case .presence(.list, let names, let keys) = $0 { "\(names) \(keys.map { $0?.short ?? "-" })" } else { nil } } }
        XCTAssertEqual(lists, ["[\"room\", \"alice\"] [\"\(roomKey.short)\", \"-\"]"])
    }

    func testFinishSaysGoodbyeOnceEverythingIsAcknowledged() async throws {
        let client = makeClient()
        let server = try await join(client)
        client.submit(.say("last words"))
        client.finish()
        try await pump("the line") { texts(server).count == 1 }
        XCTAssertFalse(queue.sync { server.messages.contains { if case .goodbye = $0 { true } else { false } } },
                       "no goodbye before the server confirmed the line")
        queue.sync { _ = server.send(.acknowledged(through: 1)) }
        try await pump("GOODBYE") { server.messages.contains(.goodbye(reason: "done")) }
        queue.sync { server.stream.close() }
        let outcome = try await withTimeout("the session's outcome") { await client.run() }
        XCTAssertEqual(outcome, .finished)
    }

    func testAfterADropUnacknowledgedLinesAreSentAgainOnceUnderTheirNumbers() async throws {
        let client = makeClient()
        let first = try await join(client)
        client.submit(.say("one"))
        client.submit(.say("two"))
        try await pump("two lines") { texts(first).count == 2 }
        queue.sync { _ = first.send(.acknowledged(through: 1)) } // "one" arrived, "two" is in doubt
        try await pump("the acknowledgement") { scheduler.pendingJobCount == 0 }
        queue.sync { first.stream.close() }

        // The client waits 1 s on the manual clock, then connects again.
        try await pump("the reconnect delay") {
            scheduler.advance(by: .milliseconds(250))
            return opened.withLock { $0.count == 2 }
        }
        let second = try await join(client, connection: 1)
        try await pump("the resent line") { texts(second).count == 1 }
        let firstSession = queue.sync { first.messages.compactMap { if case .session(let id, _) = $0 { id } else { nil } } }
        let secondSession = queue.sync { second.messages.compactMap { if case .session(let id, let next) = $0 { [id, next] } else { nil } } }
        XCTAssertEqual(secondSession, [[firstSession.first ?? 0, 1]], "the same session, from line 1 on")
        XCTAssertEqual(queue.sync { texts(second) }, ["two"], "only the line in doubt, once")
        XCTAssertTrue(events.withLock { $0.contains { if case .reconnecting(_, attempt: 1) = $0 { true } else { false } } })
    }
}

extension RoomClientTests {
    func count(_ what: (RoomClient.Event) -> Bool) -> Int { events.withLock { $0.count(where: what) } }

    /// The server says GOODBYE as svc-publish does when it stops, and closes.
    func closeRoom(_ server: RawPeer) {
        queue.sync {
            server.send(.goodbye(reason: "the server is shutting down"))
            scheduler.run() // delivered before the close (closing drops what was not)
            server.stream.close()
            scheduler.run()
        }
    }

    func testWhenTheRoomClosesItWaitsSaysSoAndRejoinsWhenTheRoomComesBack() async throws {
        let client = makeClient(waitsForRoom: true)
        let first = try await join(client)
        closeRoom(first)
        try await pump("the room-closed event") { count { if case .roomClosed = $0 { true } else { false } } == 1 }
        XCTAssertEqual(count { if case .disconnected = $0 { true } else { false } }, 0, "a closed room is not a lost connection")
        client.submit(.say("typed while the room was away"))

        // Two looks find nobody, the third finds the room again; one look at a time, 2 s apart
        // (the clock moves in steps of 100 ms).
        absentLooks.withLock { $0 = 2 }
        try await pump("the third look") {
            scheduler.advance(by: .milliseconds(100))
            return opened.withLock { $0.count == 2 }
        }
        let times = looks.withLock { $0 }
        XCTAssertEqual(times.count, 4, "the first connect, then three looks")
        for (earlier, later) in zip(times.dropFirst(), times.dropFirst(2)) {
            XCTAssertGreaterThanOrEqual(later - earlier, .seconds(2))
            XCTAssertLessThanOrEqual(later - earlier, .milliseconds(2200))
        }
        let second = try await join(client, connection: 1)
        try await pump("the line typed meanwhile") { texts(second) == ["typed while the room was away"] }
        queue.sync { _ = second.send(.text(from: "bob", to: "", text: "welcome back")) }
        try await pump("text from the room") { count { if case .text(_, _, "welcome back") = $0 { true } else { false } } == 1 }
        XCTAssertEqual(count { if case .reconnectFailed = $0 { true } else { false } }, 0, "looks that find nobody are not reported one by one")
        XCTAssertEqual(count { if case .notSent = $0 { true } else { false } }, 0)

        client.stop()
        let outcome = try await outcome(of: client)
        XCTAssertEqual(outcome, .interrupted)
    }

    /// How the session ends, with the clock driven (goodbyes wait for timers).
    func outcome(of client: RoomClient) async throws -> RoomClient.Outcome? {
        let result = Locked<RoomClient.Outcome?>(nil)
        let waiting = Task { let outcome = await client.run(); result.withLock { $0 = outcome } }
        try await pump("the end of the session") {
            scheduler.advance(by: .milliseconds(250))
            return result.withLock { $0 } != nil
        }
        try await withTimeout("the session's outcome") { await waiting.value }
        return result.withLock { $0 }
    }

    func testWithoutWaitingAClosedRoomEndsTheSessionAndReportsWhatWasNotConfirmed() async throws {
        let client = makeClient(waitsForRoom: false)
        let server = try await join(client)
        client.submit(.say("unconfirmed"))
        try await pump("the line") { texts(server).count == 1 }
        closeRoom(server)
        let outcome = try await withTimeout("the session's outcome") { await client.run() }
        XCTAssertEqual(outcome, .closedByServer("said goodbye: the server is shutting down"))
        try await pump("the end of the events") { eventsEnded.withLock { $0 } }
        XCTAssertEqual(count { if case .notSent = $0 { true } else { false } }, 1)
        XCTAssertEqual(count { if case .roomClosed = $0 { true } else { false } }, 0)
    }

    func testInputEndingWhileTheRoomIsAwayEndsAndReportsTheLinesNotSent() async throws {
        let client = makeClient(waitsForRoom: true)
        let server = try await join(client)
        closeRoom(server)
        try await pump("the room-closed event") { count { if case .roomClosed = $0 { true } else { false } } == 1 }
        client.submit(.say("nobody will read this"))
        client.finish()
        let outcome = try await withTimeout("the session's outcome") { await client.run() }
        XCTAssertEqual(outcome, .closedByServer("said goodbye: the server is shutting down"))
        // The outcome can come before the consumer task has taken the last events.
        try await pump("the end of the events") { eventsEnded.withLock { $0 } }
        XCTAssertTrue(events.withLock { $0.contains { if case .notSent("nobody will read this") = $0 { true } else { false } } })
    }

    func testInputEndingWhileTheRoomIsAwayWithNothingLeftFinishes() async throws {
        let client = makeClient(waitsForRoom: true)
        let server = try await join(client)
        closeRoom(server)
        try await pump("the room-closed event") { count { if case .roomClosed = $0 { true } else { false } } == 1 }
        client.finish()
        let outcome = try await withTimeout("the session's outcome") { await client.run() }
        XCTAssertEqual(outcome, .finished)
    }

    func testCtrlCDuringATransferSaysInterruptedAndThatSendingAgainResumes() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.write([UInt8](repeating: 7, count: 100_000), to: "big.bin")
        let client = makeClient(waitsForRoom: true)
        let server = try await join(client)
        client.submit(.send(to: nil, path: path))
        try await pump("the offer") { server.messages.contains { if case .fileOffer = $0 { true } else { false } } }
        client.stop()
        let outcome = try await outcome(of: client)
        XCTAssertEqual(outcome, .interrupted)
        let message = events.withLock { $0.compactMap { if case .fileSent(_, _, .failure(let error)) = $0 { error.message } else { nil } } }
        XCTAssertEqual(message, ["\(path) was not delivered: interrupted; send it again to resume"])
    }
}

/// A value shared with the client's callbacks, behind a lock.
final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: sending Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result { mutex.withLock(body) }
}
