import Dispatch
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// RoomServer's event sequence: events in order, a slow consumer that stops the room reading
/// from its members until it catches up, and the end after `closeAll`. The room runs on a
/// manual clock driven from one queue.
final class RoomServerEventsTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.server.events")
    let scheduler = ManualScheduler()

    /// Runs the room's pending work until `condition` holds (on the room's queue).
    func pump(_ what: String, until condition: () -> Bool) async throws {
        try await drive(what, on: queue, scheduler, until: condition)
    }

    static func texts(_ events: [RoomServer.Event]) -> [String] {
        events.compactMap { if case .text(_, _, let text) = $0 { text } else { nil } }
    }

    func testASlowConsumerStopsTheRoomReadingAndLosesNothingAndTheEventsEndAfterCloseAll() async throws {
        let limit = 4
        var options = RoomServer.Options(name: "host")
        options.eventBufferLimit = limit
        let server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler)
        let member = queue.sync {
            let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 50000)
            let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
            let peer = RawPeer(mine)
            server.accept(theirs)
            peer.send(.hello(.init(name: "alice")))
            for index in 0..<50 { peer.send(.text(from: "", to: "", text: "\(index)")) }
            return peer
        }
        // Nobody takes events: the buffer fills and the room stops reading from alice.
        try await pump("the buffer to fill") { server.eventBuffer.isPressing }
        queue.sync {
            for index in 50..<100 { member.send(.text(from: "", to: "", text: "\(index)")) }
            for _ in 0..<10 { scheduler.run() }
            XCTAssertLessThanOrEqual(server.eventBuffer.count, limit, "the buffer stops at its limit")
            XCTAssertGreaterThan(member.stream.bufferedByteCount, 0, "what alice sent later waits in her outbox, unread")
        }
        // A consumer arrives: reading goes on, and every line comes, in order.
        let events = Locked<[RoomServer.Event]>([])
        let ended = Locked(false)
        Task {
            for await event in server.events { events.withLock { $0.append(event) } }
            ended.withLock { $0 = true }
        }
        try await pump("every line") { events.withLock { Self.texts($0).count } == 100 }
        XCTAssertEqual(events.withLock { Self.texts($0) }, (0..<100).map(String.init))
        guard case .joined = events.withLock({ $0.first }) else { return XCTFail("the join is not the first event") }
        // closeAll ends the sequence, once alice has left (she closes on GOODBYE).
        let closing = Task { await server.closeAll(within: .seconds(5)) }
        try await pump("the goodbye") {
            if member.messages.contains(where: { if case .goodbye = $0 { true } else { false } }) { member.stream.close() }
            return ended.withLock { $0 }
        }
        try await withTimeout("closeAll") { await closing.value }
        guard case .left = events.withLock({ $0.last }) else { return XCTFail("alice's leaving is not the last event") }
    }
}
