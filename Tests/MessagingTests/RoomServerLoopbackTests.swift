import Dispatch
import Messaging
import MessagingCore
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// RoomServer on loopback, with many PeerLink clients in this process.
final class RoomServerLoopbackTests: XCTestCase {
    /// A room server listening on a loopback port.
    func startRoom(maximumMembers: Int, loop: EventLoop, onEvent: @escaping (RoomServer.Event) -> Void = { _ in }) throws -> (RoomServer, TCPListener) {
        var options = RoomServer.Options(name: "loop")
        options.maximumMembers = maximumMembers
        options.maximumMembersPerHostUnderLoad = .max // every member comes from this host
        let server = RoomServer(options: options, scheduler: loop, onEvent: onEvent)
        let listener = try TCPListener(port: 0)
        listener.start(on: loop) { socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: loop)) }
        return (server, listener)
    }

    /// Connects a member that says HELLO as `name`; its messages go to `onMessage` on `loop`.
    func connectMember(_ name: String, to listener: TCPListener, loop: EventLoop,
                       onMessage: @escaping (Message) -> Void) async throws -> PeerLink {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)
        let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: loop)
        let link = PeerLink(Connection(socket: socket, peer: winner, loop: loop), handshakeTimeout: nil, heartbeatInterval: .seconds(60))
        loop.runAndWait {
            link.start(onMessage: onMessage, onEnd: { _ in })
            link.send(.hello(.init(name: name)))
        }
        return link
    }

    /// Members that fit under the open-file limit (two descriptors each, both ends in this
    /// process), raised to the hard limit first: plain `swift test` often starts at 1,024.
    func membersThatFit(_ wanted: Int) -> Int {
        let limit = Int(clamping: ResourceLimits.raiseOpenFileLimit())
        return min(wanted, max(10, (limit - 128) / 2))
    }

    func testAThousandMembersJoinAndEveryOneGetsABroadcast() async throws {
        let members = membersThatFit(1000)
        if members < 1000 { print("only \(members) members: the open-file limit allows no more") }
        let serverLoop = try EventLoop(name: "test.server")
        defer { serverLoop.shutdown() }
        let joined = Mutex(0)
        let (server, listener) = try startRoom(maximumMembers: members, loop: serverLoop) { event in
            if case .joined = event { joined.withLock { $0 += 1 } }
        }
        defer { listener.cancel() }
        let clientLoop = try EventLoop(name: "test.clients")
        defer { clientLoop.shutdown() }
        let welcomed = Mutex(0)
        let received = Mutex(0)
        var links: [PeerLink] = []
        for index in 0..<members {
            links.append(try await connectMember("member\(index)", to: listener, loop: clientLoop) { message in
                switch message {
                case .welcome: welcomed.withLock { $0 += 1 }
                case .text(_, _, "to all"): received.withLock { $0 += 1 }
                default: break
                }
            })
        }
        try await waitUntil { welcomed.withLock { $0 } == members }
        XCTAssertEqual(joined.withLock { $0 }, members)
        serverLoop.execute { server.perform(.say("to all")) }
        try await waitUntil { received.withLock { $0 } == members }

        // One more is refused clearly: the room is full.
        let refusal = Mutex<UInt16?>(nil)
        let latecomer = try await connectMember("latecomer", to: listener, loop: clientLoop) { message in
            if case .error(let code, _) = message { refusal.withLock { $0 = code } }
        }
        try await waitUntil { refusal.withLock { $0 } != nil }
        XCTAssertEqual(refusal.withLock { $0 }, ProtocolError.Code.serverFull.rawValue)
        clientLoop.runAndWait { (links + [latecomer]).forEach { $0.connection.close() } }
    }

    func testUnderLoadEveryMessageArrivesOnceInItsSendersOrder() async throws {
        let members = membersThatFit(200)
        let messagesEach = 100
        let serverLoop = try EventLoop(name: "test.load.server")
        defer { serverLoop.shutdown() }
        let (_, listener) = try startRoom(maximumMembers: members, loop: serverLoop)
        defer { listener.cancel() }
        let clientLoop = try EventLoop(name: "test.load.clients")
        defer { clientLoop.shutdown() }
        // received[receiver][sender] = the sequence numbers in arrival order
        let received = Mutex([[String: [Int]]](repeating: [:], count: members))
        let welcomed = Mutex(0)
        var links: [PeerLink] = []
        for index in 0..<members {
            links.append(try await connectMember("m\(index)", to: listener, loop: clientLoop) { message in
                switch message {
                case .welcome: welcomed.withLock { $0 += 1 }
                case .text(let from, _, let text): received.withLock { $0[index][from, default: []].append(Int(text) ?? -1) }
                default: break
                }
            })
        }
        try await waitUntil { welcomed.withLock { $0 } == members }
        let senders = links
        clientLoop.execute {
            for round in 0..<messagesEach {
                for link in senders { link.send(.text(from: "", to: "", text: String(round))) }
            }
        }
        let expected = (members - 1) * messagesEach
        try await waitUntil { received.withLock { $0.allSatisfy { $0.values.reduce(0) { $0 + $1.count } == expected } } }
        let inOrder = Array(0..<messagesEach)
        received.withLock { all in
            for (index, bySender) in all.enumerated() {
                XCTAssertNil(bySender["m\(index)"], "m\(index) got its own messages back")
                XCTAssertEqual(bySender.count, members - 1)
                for (sender, sequence) in bySender where sequence != inOrder {
                    XCTFail("m\(index) got \(sender)'s messages as \(sequence.prefix(10))..., not once each in order")
                }
            }
        }
        clientLoop.runAndWait { links.forEach { $0.connection.close() } }
    }

    func testTextSentAgainInTheSameSessionIsRelayedOnce() async throws {
        let serverLoop = try EventLoop(name: "test.session.server")
        defer { serverLoop.shutdown() }
        let (_, listener) = try startRoom(maximumMembers: 10, loop: serverLoop)
        defer { listener.cancel() }
        let clientLoop = try EventLoop(name: "test.session.clients")
        defer { clientLoop.shutdown() }
        let heard = Mutex<[String]>([])
        let acknowledged = Mutex<UInt64>(0)
        let listenerLink = try await connectMember("listener", to: listener, loop: clientLoop) { message in
            if case .text(_, _, let text) = message { heard.withLock { $0.append(text) } }
        }
        let onAck = { (message: Message) in
            if case .acknowledged(let through) = message { acknowledged.withLock { $0 = through } }
        }
        /// Joins as "talker" in session 42, its next TEXT numbered `next`, and sends `texts`.
        func talk(from next: UInt64, _ texts: [String]) async throws -> PeerLink {
            let link = try await connectMember("talker", to: listener, loop: clientLoop, onMessage: onAck)
            clientLoop.runAndWait {
                link.send(.session(id: 42, next: next))
                texts.forEach { link.send(.text(from: "", to: "", text: $0)) }
            }
            return link
        }
        let first = try await talk(from: 0, ["one", "two"])
        try await waitUntil { acknowledged.withLock { $0 } == 2 }
        clientLoop.runAndWait { first.connection.close() }
        // A new connection, as after a break that lost the ACK for "two": it is sent again.
        let second = try await talk(from: 1, ["two", "three"])
        try await waitUntil { acknowledged.withLock { $0 } == 3 }
        try await waitUntil { heard.withLock { $0.count } >= 3 }
        XCTAssertEqual(heard.withLock { $0 }, ["one", "two", "three"])
        clientLoop.runAndWait { [listenerLink, second].forEach { $0.connection.close() } }
    }

    func testConnectionsThatNeverSayHelloAreCappedTheOldestGoesAndClosedOnesAreNotServed() async throws {
        let loop = try EventLoop(name: "test.pending.server")
        defer { loop.shutdown() }
        var options = RoomServer.Options(name: "loop")
        options.maximumPendingConnections = 4
        let joined = Mutex<[String]>([])
        let server = RoomServer(options: options, scheduler: loop) { event in
            if case .joined(_, let name, _, _) = event { joined.withLock { $0.append(name) } }
        }
        let listener = try TCPListener(port: 0)
        listener.start(on: loop) { socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: loop)) }
        defer { listener.cancel() }
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)
        let clientLoop = try EventLoop(name: "test.pending.clients")
        defer { clientLoop.shutdown() }
        let errors = Mutex<[Int: UInt16]>([:])
        var silent: [PeerLink] = []
        for index in 0..<5 {
            let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: clientLoop)
            let link = PeerLink(Connection(socket: socket, peer: winner, loop: clientLoop), handshakeTimeout: nil, heartbeatInterval: .seconds(60))
            clientLoop.runAndWait { link.start(onMessage: { if case .error(let code, _) = $0 { errors.withLock { $0[index] = code } } }, onEnd: { _ in }) }
            silent.append(link)
            try await waitUntil { loop.runAndWait { true } } // the server took it before the next one comes
        }
        // The fifth made one place too many: the one that waited longest was closed.
        try await waitUntil { errors.withLock { $0 } == [0: ProtocolError.Code.serverFull.rawValue] }
        // It says HELLO after all: it is not served (it had its answer).
        clientLoop.runAndWait { _ = silent[0].send(.hello(.init(name: "latecomer"))) }
        // One of the four waiting says HELLO and joins; its place is free again.
        clientLoop.runAndWait { _ = silent[1].send(.hello(.init(name: "first"))) }
        try await waitUntil { joined.withLock { $0 } == ["first"] }
        let late = try await connectMember("second", to: listener, loop: clientLoop) { _ in }
        try await waitUntil { joined.withLock { $0 } == ["first", "second"] }
        XCTAssertEqual(errors.withLock { $0 }.count, 1)
        clientLoop.runAndWait { (silent + [late]).forEach { $0.connection.close() } }
    }

    func testOnceTheRoomIsHalfFullOneHostGetsNoMoreThanItsShare() async throws {
        let loop = try EventLoop(name: "test.share.server")
        defer { loop.shutdown() }
        var options = RoomServer.Options(name: "loop")
        options.maximumMembers = 10
        options.maximumMembersPerHostUnderLoad = 3
        let server = RoomServer(options: options, scheduler: loop) { _ in }
        let listener = try TCPListener(port: 0)
        listener.start(on: loop) { socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: loop)) }
        defer { listener.cancel() }
        let clientLoop = try EventLoop(name: "test.share.clients")
        defer { clientLoop.shutdown() }
        let outcomes = Mutex<[String: String]>([:])
        var links: [PeerLink] = []
        for index in 0..<7 {
            links.append(try await connectMember("m\(index)", to: listener, loop: clientLoop) { message in
                switch message {
                case .welcome: outcomes.withLock { $0["m\(index)"] = "welcome" }
                case .error(let code, _): outcomes.withLock { $0["m\(index)"] = "error \(code)" }
                default: break
                }
            })
            try await waitUntil { outcomes.withLock { $0["m\(index)"] } != nil }
        }
        // Five fit (under half of 10, any host may join); then this host already has 5 >= 3.
        XCTAssertEqual(outcomes.withLock { $0 }.filter { $0.value == "welcome" }.count, 5)
        XCTAssertEqual(outcomes.withLock { $0["m5"] }, "error \(ProtocolError.Code.serverFull.rawValue)")
        XCTAssertEqual(outcomes.withLock { $0["m6"] }, "error \(ProtocolError.Code.serverFull.rawValue)")
        clientLoop.runAndWait { links.forEach { $0.connection.close() } }
    }

    func testTheLargestTextIsRelayedWithItsSendersNameAndALargerOneIsRefused() async throws {
        let serverLoop = try EventLoop(name: "test.large.server")
        defer { serverLoop.shutdown() }
        let (_, listener) = try startRoom(maximumMembers: 10, loop: serverLoop)
        defer { listener.cancel() }
        let clientLoop = try EventLoop(name: "test.large.clients")
        defer { clientLoop.shutdown() }
        let heard = Mutex<[Int]>([])
        let errors = Mutex<[String]>([])
        let name = String(repeating: "n", count: 32)
        let listenerLink = try await connectMember(name, to: listener, loop: clientLoop) { message in
            if case .text(_, _, let text) = message { heard.withLock { $0.append(text.utf8.count) } }
        }
        let talker = try await connectMember(String(repeating: "t", count: 32), to: listener, loop: clientLoop) { message in
            if case .error(_, let text) = message { errors.withLock { $0.append(text) } }
        }
        let longest = String(repeating: "x", count: Message.maximumTextBytes)
        clientLoop.runAndWait {
            talker.send(.text(from: "", to: "", text: longest))
            talker.send(.text(from: "", to: name, text: longest))
            talker.connection.send(Frame(type: 0x10, payload: [0, 0, 0, 0] + Array(repeating: 0x79, count: Message.maximumTextBytes + 1)).encoded)
            talker.send(.text(from: "", to: "", text: "after"))
        }
        try await waitUntil { heard.withLock { $0 } == [Message.maximumTextBytes, Message.maximumTextBytes, 5] }
        XCTAssertEqual(errors.withLock { $0 }, ["TEXT text is 65537 bytes; the limit is 65536"])
        clientLoop.runAndWait { [listenerLink, talker].forEach { $0.connection.close() } }
    }
}
