import Dispatch
import DiscoveryCore
import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import TransportPOSIX
import XCTest

/// What a room's members can make a client print about files offered to it: limited like the
/// other reports a peer can repeat at will, relayed ones included.
final class RoomClientFileReportTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.client.files")
    let scheduler = ManualScheduler()
    let opened = Locked<[InMemoryStream]>([])
    let events = Locked<[RoomClient.Event]>([])
    /// The client's event sequence ended.
    let eventsEnded = Locked(false)
    var directory: TemporaryDirectory?

    /// A client joined as bob to an in-memory room, and the room's side of the connection.
    func joinedClient(inbox: Bool) async throws -> (RoomClient, RawPeer) {
        let directory = try TemporaryDirectory()
        self.directory = directory
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "bob")
        options.reconnect = false
        if inbox { options.inbox = try Inbox(directory: directory.path + "/inbox") }
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 4242)
        let client = RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { [scheduler, opened] _, _ in
            let (client, server) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, nil))
            opened.withLock { $0.append(server) }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        }, fileWork: scheduler)
        collectEvents(of: client, into: events, ended: eventsEnded)
        let connected = Locked(false)
        let joining = Task {
            try await client.connect()
            connected.withLock { $0 = true }
        }
        try await pump("the client to connect") { opened.withLock { !$0.isEmpty } }
        let room = queue.sync { RawPeer(opened.withLock { $0[0] }) }
        // The client reads only once it has started on its queue: answer after its HELLO (an
        // answer sent before could wait for a turn of the manual clock that never comes).
        try await pump("HELLO") { room.messages.contains { if case .hello = $0 { true } else { false } } }
        queue.sync {
            room.send(.hello(.init(capabilities: .beforeStreamedFiles, name: "room")))
            room.send(.welcome(name: "bob"))
        }
        do {
            try await pump("the client to join") { connected.withLock { $0 } }
        } catch {
            client.stop()
            throw error
        }
        try await withTimeout("the join") { try await joining.value }
        return (client, room)
    }

    /// Runs the client's pending work until `condition` holds (on the client's queue); fails
    /// instead of waiting for ever.
    func pump(_ what: String, until condition: () -> Bool) async throws {
        try await drive(what, on: queue, scheduler, until: condition)
    }

    /// File events that print a line. (Progress draws no line of its own: it only moves the bar
    /// of a transfer whose `receiving` line was printed, so a suppressed one shows nothing.)
    var fileLinesPrinted: Int {
        events.withLock {
            $0.count {
                guard case .file(let event) = $0 else { return false }
                if case .relayed(_, .progress) = event { return false }
                return true
            }
        }
    }

    /// Stops the client and waits until its consumer took every event.
    func stopAndTakeEvents(_ client: RoomClient) async throws {
        client.stop()
        for _ in 0..<2000 where !eventsEnded.withLock({ $0 }) {
            queue.sync { scheduler.advance(by: .milliseconds(100)) }
            try await Task.sleep(for: .milliseconds(1))
        }
        XCTAssertTrue(eventsEnded.withLock { $0 }, "the events end once the session and its link did")
    }

    func summaries() -> [String] {
        events.withLock { $0.compactMap { if case .suppressed(let count, let what) = $0 { "\(count) \(what)" } else { nil } } }
    }

    func testAnOfferAndCancelLoopThroughTheRoomPrintsAtMostTheBurstThenASummary() async throws {
        let (client, room) = try await joinedClient(inbox: true)
        // Mallory offers and cancels 200 files through the room within a second.
        queue.sync {
            for index in 0..<200 as Range<UInt32> {
                let id = (1 << 31) + index
                room.send(.fileOfferFrom(.init(id: id, size: 10, digest: [UInt8](repeating: UInt8(index % 256), count: 32), name: "x\(index)"), from: "mallory", host: 7))
                scheduler.run()
                room.send(.fileCancel(id: id, reason: "gone"))
                scheduler.run()
            }
        }
        queue.sync { scheduler.advance(by: .seconds(11)) }
        try await stopAndTakeEvents(client)
        XCTAssertEqual(fileLinesPrinted, 20, "the burst, receiving and failed lines together")
        XCTAssertEqual(summaries(), ["380 reports of files offered to us: receiving, failed or stored"])
    }

    func testAFloodOfTinyFilesThatAreStoredPrintsAtMostTheBurstThenASummary() async throws {
        let (client, room) = try await joinedClient(inbox: true)
        // Mallory sends 100 one-byte files through the room, each stored.
        queue.sync {
            for index in 0..<100 as Range<UInt32> {
                let id = (1 << 31) + index
                let content = [UInt8(index)]
                let digest = SHA256()
                digest.update(content)
                room.send(.fileOfferFrom(.init(id: id, size: 1, digest: digest.finish(), name: "tiny\(index)"), from: "mallory", host: 7))
                room.send(.fileChunk(id: id, data: content[...]))
                room.send(.fileEnd(id: id, digest: nil))
                scheduler.run()
            }
        }
        let stored = room.messages.count { if case .fileResult(_, .stored, _) = $0 { true } else { false } }
        XCTAssertEqual(stored, 100, "every file was stored")
        queue.sync { scheduler.advance(by: .seconds(11)) }
        try await stopAndTakeEvents(client)
        XCTAssertEqual(fileLinesPrinted, 20, "the burst, receiving and stored lines together")
        XCTAssertEqual(summaries(), ["180 reports of files offered to us: receiving, failed or stored"])
    }

    func testACancelThatCrossesTheStoringOfARelayedFileIsDroppedNotAnsweredAsAnError() async throws {
        let (client, room) = try await joinedClient(inbox: true)
        queue.sync {
            let id: UInt32 = 1 << 31
            let digest = SHA256()
            digest.update([42])
            room.send(.fileOfferFrom(.init(id: id, size: 1, digest: digest.finish(), name: "tiny"), from: "mallory", host: 7))
            room.send(.fileChunk(id: id, data: [42]))
            room.send(.fileEnd(id: id, digest: nil))
            scheduler.run()
            room.send(.fileCancel(id: id, reason: "too late"))
            scheduler.run()
        }
        XCTAssertTrue(room.messages.contains { if case .fileResult(_, .stored, _) = $0 { true } else { false } }, "\(room.messages)")
        XCTAssertFalse(room.messages.contains { if case .error = $0 { true } else { false } }, "\(room.messages)")
        client.stop()
    }

    func testACancelThatCrossesOurRefusalIsDroppedNotAnsweredAsAnError() async throws {
        let (client, room) = try await joinedClient(inbox: false)
        queue.sync {
            let id: UInt32 = 1 << 31
            room.send(.fileOfferFrom(.init(id: id, size: 10, digest: [UInt8](repeating: 1, count: 32), name: "x"), from: "mallory", host: 7))
            room.send(.fileCancel(id: id, reason: "gone"))
            scheduler.run()
            // An id this side never saw is still the sender's mistake.
            room.send(.fileCancel(id: id + 1, reason: "never offered"))
            scheduler.run()
        }
        let errors = room.messages.compactMap { if case .error(_, let text) = $0 { text } else { nil } }
        XCTAssertEqual(errors.count, 1, "\(errors)")
        XCTAssertTrue(errors.first?.contains("id \(UInt32(1 << 31) + 1)") == true, "\(errors)")
        XCTAssertTrue(room.messages.contains { if case .fileResult(_, .refused, _) = $0 { true } else { false } }, "refused: no inbox")
        client.stop()
    }
}
