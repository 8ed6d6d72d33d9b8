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

    func testAnOfferAndCancelLoopThroughTheRoomPrintsAtMostTheBurstThenASummary() async throws {
        let directory = try TemporaryDirectory()
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "bob")
        options.reconnect = false
        options.inbox = try Inbox(directory: directory.path + "/inbox")
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 4242)
        let client = RoomClient(options: options, queue: queue, scheduler: scheduler, connector: { [scheduler, opened] _, _, _ in
            let (client, server) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, nil))
            opened.withLock { $0.append(server) }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        }, fileWork: scheduler, onEvent: { [events] event in events.withLock { $0.append(event) } })
        let joining = Task { try await client.connect() }
        var server: RawPeer?
        for _ in 0..<2000 where server == nil {
            queue.sync {
                scheduler.run()
                if let stream = opened.withLock({ $0.first }) { server = RawPeer(stream) }
            }
            if server == nil { try await Task.sleep(for: .milliseconds(1)) }
        }
        let room = try XCTUnwrap(server)
        queue.sync {
            room.send(.hello(.init(name: "room")))
            room.send(.welcome(name: "bob"))
            scheduler.run()
        }
        try await joining.value
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
        let printed = events.withLock { $0.count { if case .file = $0 { true } else { false } } }
        XCTAssertEqual(printed, 20, "the burst, receiving and failed lines together")
        queue.sync { scheduler.advance(by: .seconds(11)) }
        let summaries = events.withLock { $0.compactMap { if case .suppressed(let count, let what) = $0 { "\(count) \(what)" } else { nil } } }
        XCTAssertEqual(summaries, ["380 reports of files offered to us (receiving, failed, or stored already)"])
        client.stop()
    }
}
