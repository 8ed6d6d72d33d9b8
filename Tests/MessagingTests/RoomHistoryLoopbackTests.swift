import Dispatch
import Messaging
import MessagingCore
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// The room's history on loopback: what a late joiner is sent, and what never is.
final class RoomHistoryLoopbackTests: XCTestCase {
    let loop = try! EventLoop(name: "test.history")

    override func tearDown() {
        loop.shutdown()
    }

    /// What one member received, in order.
    final class Received: Sendable {
        private let messages = Mutex<[Message]>([])
        func append(_ message: Message) { messages.withLock { $0.append(message) } }
        func withLock<T>(_ body: ([Message]) -> T) -> T { messages.withLock { body($0) } }
    }

    func member(_ name: String, _ capabilities: Message.Capabilities, port: UInt16,
                received: Received) async throws -> PeerLink {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: port)
        let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: loop)
        let link = PeerLink(Connection(socket: socket, peer: winner, loop: loop), handshakeTimeout: nil, heartbeatInterval: .seconds(60))
        loop.runAndWait {
            link.start(onMessage: { message in received.append(message) }, onEnd: { _ in })
            link.send(.hello(.init(capabilities: capabilities, name: name)))
        }
        return link
    }

    func testALateJoinerGetsTheLastLinesToEveryoneButNoPrivateOnes() async throws {
        var options = RoomServer.Options(name: "host")
        options.historyLength = 3
        let events = Mutex<[RoomServer.Event]>([])
        let server = RoomServer(options: options, scheduler: loop) { event in events.withLock { $0.append(event) } }
        let listener = try TCPListener(port: 0)
        listener.start(on: loop) { [loop] socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: loop)) }
        defer { listener.cancel() }

        let aliceGot = Received()
        let alice = try await member("alice", .all, port: listener.port, received: aliceGot)
        try await waitUntil { aliceGot.withLock { $0.contains { if case .welcome = $0 { true } else { false } } } }
        XCTAssertFalse(aliceGot.withLock { $0.contains { if case .history = $0 { true } else { false } } }, "nothing was said yet")
        loop.runAndWait {
            for number in 1...3 { alice.send(.text(from: "", to: "", text: "line \(number)")) }
            alice.send(.text(from: "", to: "host", text: "private to the host"))
        }
        try await waitUntil { events.withLock { $0.filter { if case .text = $0 { true } else { false } }.count } == 4 }
        loop.runAndWait {
            server.perform(.say("from the host"))
            server.perform(.message(to: "alice", text: "private to alice"))
        }
        // The publisher's own lines are events too, so its output shows them.
        let ownLines = events.withLock { $0.compactMap { event -> String? in
            guard case .text("host", let to, let text) = event else { return nil }
            return "\(to ?? "everyone"): \(text)"
        } }
        XCTAssertEqual(ownLines, ["everyone: from the host", "alice: private to alice"])

        let bobGot = Received()
        let bob = try await member("bob", .all, port: listener.port, received: bobGot)
        let carolGot = Received()
        let carol = try await member("carol", [.rooms, .files, .resume, .acknowledgedText], port: listener.port, received: carolGot)
        try await waitUntil { bobGot.withLock { $0.count } >= 5 && carolGot.withLock { $0.contains { if case .presence(.list, _) = $0 { true } else { false } } } }
        let history = bobGot.withLock { $0.compactMap { message -> String? in
            guard case .history(let time, let from, let text) = message else { return nil }
            XCTAssertGreaterThan(time, 1_700_000_000_000, "milliseconds since 1970")
            return "\(from): \(text)"
        } }
        XCTAssertEqual(history, ["alice: line 2", "alice: line 3", "host: from the host"])
        let order = bobGot.withLock { $0.map { message -> String in
            switch message {
            case .hello: "hello"
            case .welcome: "welcome"
            case .presence(.list, _), .presenceWithKeys(.list, _): "list"
            case .history: "history"
            default: "other"
            }
        } }
        XCTAssertEqual(Array(order.prefix(6)), ["hello", "welcome", "list", "history", "history", "history"])
        // Sent only to a client that announces the capability: an older client sees none.
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertFalse(carolGot.withLock { $0.contains { if case .history = $0 { true } else { false } } })
        loop.runAndWait { [alice, bob, carol].forEach { $0.connection.close() } }
    }

    func testZeroKeepsNoHistory() async throws {
        var options = RoomServer.Options(name: "host")
        options.historyLength = 0
        let server = RoomServer(options: options, scheduler: loop) { _ in }
        let listener = try TCPListener(port: 0)
        listener.start(on: loop) { [loop] socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: loop)) }
        defer { listener.cancel() }
        let firstGot = Received()
        let first = try await member("first", .all, port: listener.port, received: firstGot)
        try await waitUntil { firstGot.withLock { $0.contains { if case .welcome = $0 { true } else { false } } } }
        loop.runAndWait { server.perform(.say("not kept")) }
        let laterGot = Received()
        let later = try await member("later", .all, port: listener.port, received: laterGot)
        try await waitUntil { laterGot.withLock { $0.contains { if case .presenceWithKeys(.list, _) = $0 { true } else { false } } } }
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertFalse(laterGot.withLock { $0.contains { if case .history = $0 { true } else { false } } })
        loop.runAndWait { [first, later].forEach { $0.connection.close() } }
    }
}
