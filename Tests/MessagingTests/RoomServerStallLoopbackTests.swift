import Dispatch
@testable import Messaging
import MessagingCore
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// A stalled consumer of `RoomServer.events` over loopback TCP, with real timers (heartbeat
/// 250 ms, so the stall counts after 1 s): a newcomer is refused at once with `server-full`,
/// the member that is no longer read is dropped by its heartbeat, and once events are taken
/// again a newcomer is welcomed.
final class RoomServerStallLoopbackTests: XCTestCase {
    /// What one member's link received, and whether it ended.
    final class Seen: Sendable {
        let errors = Mutex<[(code: UInt16, text: String)]>([])
        let welcomed = Mutex(false)
        let ended = Mutex(false)
    }

    func connect(_ name: String, to port: UInt16, loop: EventLoop, then messages: [Message] = []) async throws -> (PeerLink, Seen) {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: port)
        let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: loop)
        let link = PeerLink(Connection(socket: socket, peer: winner, loop: loop), handshakeTimeout: nil, heartbeatInterval: .milliseconds(250))
        let seen = Seen()
        loop.runAndWait {
            link.start(onMessage: { message in
                switch message {
                case .welcome: seen.welcomed.withLock { $0 = true }
                case .error(let code, let text): seen.errors.withLock { $0.append((code, text)) }
                default: break
                }
            }, onEnd: { _ in seen.ended.withLock { $0 = true } })
            link.send(.hello(.init(name: name)))
            for message in messages { link.send(message) }
        }
        return (link, seen)
    }

    func testAStalledConsumerLosesItsMembersAndNewcomersAreRefusedUntilItTakesEventsAgain() async throws {
        let serverLoop = try EventLoop(name: "test.stall.server")
        defer { serverLoop.shutdown() }
        let clientLoop = try EventLoop(name: "test.stall.clients")
        defer { clientLoop.shutdown() }
        var options = RoomServer.Options(name: "stall")
        options.eventBufferLimit = 4
        options.heartbeatInterval = .milliseconds(250)
        let server = RoomServer(options: options, scheduler: serverLoop)
        let listener = try TCPListener(port: 0)
        listener.start(on: serverLoop) { socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: serverLoop)) }
        defer { listener.cancel() }

        // Nobody takes events: alice's lines fill the buffer and the room stops reading her.
        let lines = (0..<20).map { Message.text(from: "", to: "", text: "\($0)") }
        let started = ContinuousClock.now
        let (alice, aliceSaw) = try await connect("alice", to: listener.port, loop: clientLoop, then: lines)
        try await waitUntil(timeout: .seconds(10)) { serverLoop.runAndWait { server.eventBuffer.isPressing } }
        // After 4 intervals (1 s) of hold, a newcomer is refused at once.
        try await waitUntil(timeout: .seconds(10)) { serverLoop.runAndWait { server.consumerStalled } }
        let (_, bobSaw) = try await connect("bob", to: listener.port, loop: clientLoop)
        try await waitUntil(timeout: .seconds(2)) { bobSaw.ended.withLock { $0 } }
        XCTAssertEqual(bobSaw.errors.withLock { $0.map(\.code) }, [ProtocolError.Code.serverFull.rawValue])
        XCTAssertFalse(bobSaw.welcomed.withLock { $0 })
        // Alice, who answers every ping, is dropped by her heartbeat all the same: unread.
        try await waitUntil(timeout: .seconds(10)) { aliceSaw.ended.withLock { $0 } }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(1), "dropped before the stall limit")
        XCTAssertEqual(aliceSaw.errors.withLock { $0.map(\.code) }, [ProtocolError.Code.heartbeatTimeout.rawValue])

        // Events are taken again: a newcomer is welcomed.
        let consumer = Task { for await _ in server.events {} }
        defer { consumer.cancel() }
        try await waitUntil(timeout: .seconds(10)) { serverLoop.runAndWait { !server.consumerStalled } }
        let (carol, carolSaw) = try await connect("carol", to: listener.port, loop: clientLoop)
        try await waitUntil(timeout: .seconds(5)) { carolSaw.welcomed.withLock { $0 } }
        clientLoop.runAndWait { [alice, carol].forEach { $0.connection.close() } }
    }
}
