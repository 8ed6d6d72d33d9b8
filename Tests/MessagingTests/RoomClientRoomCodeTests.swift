import Dispatch
import DiscoveryCore
import Messaging
import MessagingCore
import MessagingTesting
import RoomCodeExchange
import Synchronization
import TransportCore
import XCTest

/// A RoomClient with a room code against a RoomServer on in-memory streams that report a TLS
/// session: both run CPace, the right code joins, a wrong one or a relay fails on both sides
/// with `wrong-room-code`, and a room that skips the exchange is refused.
final class RoomClientRoomCodeTests: XCTestCase {
    let queue = DispatchQueue(label: "test.room.code")
    let scheduler = ManualScheduler()
    let events = Locked<[RoomClient.Event]>([])
    let serverEvents = Locked<[RoomServer.Event]>([])
    let code = try! RoomCode(parsing: "4829-1530-7719")
    let roomKey = PublicKeyFingerprint(bytes: [UInt8](repeating: 200, count: 32))!
    let memberKey = PublicKeyFingerprint(bytes: [UInt8](repeating: 1, count: 32))!

    /// A client whose connector hands its stream to `server` (or to a raw peer kept in
    /// `rawServer`), with sessions whose ids are `clientSID` and `serverSID` (a relay: they differ).
    func makeClient(code: RoomCode?, server: RoomServer?, rawServer: Locked<RawPeer?>? = nil,
                    clientSID: [UInt8] = [UInt8](repeating: 3, count: 32), serverSID: [UInt8]? = nil, plaintext: Bool = false) -> RoomClient {
        var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "alice")
        options.reconnect = false
        options.roomCode = code
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, 1])!, port: 4242)
        let (scheduler, roomKey, memberKey, queue) = (scheduler, roomKey, memberKey, queue)
        let client = RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { _, _ in
            let (client, serverEnd) = InMemoryStream.pair(scheduler: scheduler, peers: (endpoint, endpoint))
            if !plaintext {
                client.secureSession = SecureSession(peerKey: roomKey, safetyCode: "1", localKey: memberKey, roomCodeSessionID: clientSID)
                serverEnd.secureSession = SecureSession(peerKey: memberKey, safetyCode: "1", localKey: roomKey, roomCodeSessionID: serverSID ?? clientSID)
            }
            queue.async {
                if let server { server.accept(serverEnd) } else { rawServer?.withLock { $0 = RawPeer(serverEnd) } }
            }
            return RoomClient.Connected(stream: client, endpoint: endpoint, candidates: [endpoint])
        })
        collectEvents(of: client, into: events)
        return client
    }

    func makeServer(code: RoomCode?) -> RoomServer {
        var options = RoomServer.Options(name: "room")
        options.roomCode = code
        return RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [serverEvents] event in
            serverEvents.withLock { $0.append(event) }
        }
    }

    /// Connects, running the manual clock on the client's queue, until the join ends.
    /// - Parameter eachTurn: runs on the client's queue before each turn of the clock.
    func join(_ client: RoomClient, eachTurn: () -> Void = {}) async -> Result<Void, any Error> {
        let joining = Task { try await client.connect() }
        let done = Locked(false)
        Task { _ = await joining.result; done.withLock { $0 = true } }
        for _ in 0..<2000 where !done.withLock({ $0 }) {
            queue.sync { eachTurn(); _ = scheduler.run() }
            try? await Task.sleep(for: .milliseconds(1))
        }
        do {
            return try await withTimeout("the join") { await joining.result }
        } catch {
            return .failure(error)
        }
    }

    func protocolCode(_ result: Result<Void, any Error>) -> ProtocolError.Code? {
        guard case .failure(let error) = result else { return nil }
        return (error as? ProtocolError)?.code
    }

    var serverFailures: Int {
        serverEvents.withLock { $0.count { if case .roomCodeFailed = $0 { true } else { false } } }
    }

    func testTheRightCodeJoinsAndTheRoomIsConfirmedBeforeTheWelcome() async throws {
        let client = makeClient(code: code, server: makeServer(code: code))
        guard case .success = await join(client) else { return XCTFail("the join failed") }
        let order = events.withLock { $0.compactMap { event -> String? in
            switch event {
            case .roomCodeConfirmed(let session): session.peerKey == roomKey ? "confirmed" : "wrong key"
            case .serverHello(let name): "hello from \(name)"
            case .joined: "joined"
            default: nil
            }
        } }
        XCTAssertEqual(order, ["confirmed", "hello from room", "joined"], "the room's name is shown only once it proved the code")
        XCTAssertEqual(serverFailures, 0)
    }

    func testAWrongCodeFailsOnBothSides() async throws {
        var wrong = try RoomCode.generate()
        while wrong == code { wrong = try RoomCode.generate() }
        let client = makeClient(code: wrong, server: makeServer(code: code))
        let result = await join(client)
        XCTAssertEqual(protocolCode(result), .wrongRoomCode)
        queue.sync { _ = scheduler.run() }
        XCTAssertEqual(serverFailures, 1)
    }

    func testARelayForwardingEveryByteFailsOnBothSides() async throws {
        let client = makeClient(code: code, server: makeServer(code: code), serverSID: [UInt8](repeating: 4, count: 32))
        let result = await join(client)
        XCTAssertEqual(protocolCode(result), .wrongRoomCode)
        queue.sync { _ = scheduler.run() }
        XCTAssertEqual(serverFailures, 1)
    }

    func testARoomWithoutACodeRefusesTheExchange() async throws {
        let client = makeClient(code: code, server: makeServer(code: nil))
        let result = await join(client)
        XCTAssertEqual(protocolCode(result), .codeExchange)
    }

    func testARoomThatWelcomesWithoutTheExchangeIsRefused() async throws {
        let raw = Locked<RawPeer?>(nil)
        let client = makeClient(code: code, server: nil, rawServer: raw)
        var greeted = false
        let result = await join(client) {
            guard !greeted, let server = raw.withLock({ $0 }) else { return }
            greeted = true
            server.send(.hello(.init(name: "room")))
            server.send(.welcome(name: "alice"))
        }
        XCTAssertEqual(protocolCode(result), .codeExchange)
        XCTAssertFalse(events.withLock { $0.contains { if case .joined = $0 { true } else { false } } })
    }

    /// A room that has not proved the code says our code is wrong (a security review's
    /// finding): that is no wrong code (only our own check of its tag says so), and its
    /// HELLO's name is never shown.
    func testAnErrorFromARoomNotProvedIsItsRefusalAndItsNameIsNotShown() async throws {
        for (code, expected) in [(ProtocolError.Code.wrongRoomCode, ProtocolError.Code.codeExchange), (.notAdmitted, .codeExchange),
                                 (.tooManyAttempts, .tooManyAttempts)] {
            events.withLock { $0.removeAll() }
            let raw = Locked<RawPeer?>(nil)
            let client = makeClient(code: self.code, server: nil, rawServer: raw)
            var refused = false
            let result = await join(client) {
                guard !refused, let server = raw.withLock({ $0 }) else { return }
                refused = true
                server.send(.hello(.init(name: "impostor")))
                server.send(.error(code: code.rawValue, message: "says no"))
            }
            XCTAssertEqual(protocolCode(result), expected, code.name)
            guard case .failure(let error) = result else { continue }
            XCTAssertTrue("\(error)".contains("the room, which has not proved the room code, refused: "), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("says no"), "\(error)")
            XCTAssertFalse(events.withLock { $0.contains { if case .serverHello = $0 { true } else { false } } }, code.name)
        }
    }

    func testAPlaintextLinkCannotCarryACode() async throws {
        let client = makeClient(code: code, server: makeServer(code: code), plaintext: true)
        let result = await join(client)
        XCTAssertEqual(protocolCode(result), .codeExchange)
    }
}
