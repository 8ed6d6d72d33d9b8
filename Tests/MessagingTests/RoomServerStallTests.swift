import Dispatch
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A consumer of `RoomServer.events` that stops taking them (review attacks15y, finding 4): the
/// room holds reading for it only for 4 heartbeat intervals; after that its members count as
/// silent (dropped once their heartbeat allows) and newcomers are refused at once, until the
/// consumer takes events again. A shorter pause costs nobody anything. Manual clock, heartbeat 1 s.
final class RoomServerStallTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.server.stall")
    let scheduler = ManualScheduler()
    var server: RoomServer!
    var accepted = 0

    override func setUp() {
        var options = RoomServer.Options(name: "host")
        options.eventBufferLimit = 4
        options.heartbeatInterval = .seconds(1)
        server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler)
    }

    /// Runs the room's pending work until `condition` holds (on the room's queue).
    func pump(_ what: String, until condition: () -> Bool) async throws {
        try await drive(what, on: queue, scheduler, until: condition)
    }

    /// Moves the clock by `duration` in steps of 100 ms; the members given keep saying PING
    /// every step, as live members do, whether or not the room reads them.
    func advance(by duration: Duration, pinging members: [RawPeer]) {
        queue.sync {
            var moved = Duration.zero
            while moved < duration {
                for member in members where member.closeReason == nil { member.send(.ping(token: 1)) }
                scheduler.advance(by: .milliseconds(100))
                moved += .milliseconds(100)
            }
        }
    }

    /// A new connection to the room; it says HELLO with `name`, then what `then` gives.
    func connect(_ name: String, then messages: [Message] = []) -> RawPeer {
        queue.sync {
            accepted += 1
            let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, UInt8(accepted)])!, port: 50000)
            let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
            let peer = RawPeer(mine)
            server.accept(theirs)
            peer.send(.hello(.init(name: name)))
            for message in messages { peer.send(message) }
            scheduler.run()
            return peer
        }
    }

    static func errors(_ peer: RawPeer) -> [String] {
        peer.messages.compactMap { if case .error(let code, let text) = $0 { "\(ProtocolError.Code(rawValue: code)?.name ?? "?"): \(text)" } else { nil } }
    }

    static func welcomed(_ peer: RawPeer) -> Bool {
        peer.messages.contains { if case .welcome = $0 { true } else { false } }
    }

    func testAConsumerStalledForFourHeartbeatsLosesItsMembersAndNewcomersAreRefusedAtOnce() async throws {
        let lines = (0..<20).map { Message.text(from: "", to: "", text: "\($0)") }
        let alice = connect("alice", then: lines)
        try await pump("the buffer to fill") { server.eventBuffer.isPressing }

        // Within the 4 intervals alice stays, though nothing of hers is read.
        advance(by: .milliseconds(3800), pinging: [alice])
        queue.sync {
            XCTAssertNil(alice.closeReason)
            XCTAssertFalse(server.consumerStalled)
            // The room kept pinging her, so her side hears it all along.
            XCTAssertGreaterThanOrEqual(alice.messages.count { if case .ping = $0 { true } else { false } }, 3)
        }
        // Then the room no longer counts her as alive, and refuses a newcomer at once.
        advance(by: .milliseconds(400), pinging: [alice])
        XCTAssertTrue(queue.sync { server.consumerStalled })
        let bob = connect("bob")
        try await pump("bob's refusal") { !Self.errors(bob).isEmpty }
        XCTAssertEqual(Self.errors(bob), ["server-full: " + RoomServer.stalledRefusal])
        advance(by: .seconds(1), pinging: [])
        XCTAssertNotNil(queue.sync { bob.closeReason }, "bob's connection is closed")
        XCTAssertFalse(Self.welcomed(bob))
        // Alice is dropped once her heartbeat allows, at most 4 intervals after the stall
        // began, though she kept pinging: she is not read.
        advance(by: .milliseconds(4200), pinging: [alice])
        try await pump("alice's drop") { alice.closeReason != nil }
        XCTAssertEqual(Self.errors(alice).map { $0.hasPrefix("heartbeat-timeout: the room has read nothing from its members") }, [true])

        // A consumer comes back: it learns what happened, and newcomers are let in again.
        let events = Locked<[RoomServer.Event]>([])
        let consumer = Task { [server = server!] in for await event in server.events { events.withLock { $0.append(event) } } }
        defer { consumer.cancel() }
        try await pump("alice's leaving") { events.withLock { $0.contains { if case .left = $0 { true } else { false } } } }
        let notes = events.withLock { $0.compactMap { if case .note(let text) = $0 { text } else { nil } } }
        XCTAssertEqual(notes, ["the room's events were not taken for 4 s: members it cannot read are dropped as silent and newcomers are refused until they are taken again"])
        try await pump("the end of the stall") { !server.consumerStalled && !server.eventBuffer.isPressing }
        let carol = connect("carol")
        try await pump("carol's welcome") { Self.welcomed(carol) }
    }

    func testAConsumerThatPausesForLessThanFourHeartbeatsCostsNobodyAnything() async throws {
        let lines = (0..<20).map { Message.text(from: "", to: "", text: "\($0)") }
        let alice = connect("alice", then: lines)
        try await pump("the buffer to fill") { server.eventBuffer.isPressing }
        advance(by: .seconds(3), pinging: [alice])
        // The consumer takes the events: reading goes on, nobody was dropped.
        let events = Locked<[RoomServer.Event]>([])
        let consumer = Task { [server = server!] in for await event in server.events { events.withLock { $0.append(event) } } }
        defer { consumer.cancel() }
        try await pump("alice's lines") { events.withLock { RoomServerEventsTests.texts($0).count } == 20 }
        // Ten seconds later, with the consumer taking events, alice is still there.
        advance(by: .seconds(10), pinging: [alice])
        queue.sync {
            XCTAssertNil(alice.closeReason)
            XCTAssertFalse(server.consumerStalled)
            XCTAssertEqual(Self.errors(alice), [])
        }
        let bob = connect("bob")
        try await pump("bob's welcome") { Self.welcomed(bob) }
    }
}
