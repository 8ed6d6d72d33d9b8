import Dispatch
import Foundation
import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// FileTransfers inside a RoomServer on loopback, with members that speak frames directly:
/// replies that match nothing, a resumed prefix hashed while the room keeps serving, and a
/// stalled transfer that gives its slot back.
final class FileTransfersLoopbackTests: XCTestCase {
    var directory = ""
    let serverLoop = try! EventLoop(name: "test.files.server")
    let clientLoop = try! EventLoop(name: "test.files.clients")
    var listener: TCPListener?
    var links: [PeerLink] = []

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "svc-files-loop-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        let links = links
        clientLoop.runAndWait { links.forEach { $0.connection.close() } }
        listener?.cancel()
        try? FileManager.default.removeItem(atPath: directory)
        serverLoop.shutdown()
        clientLoop.shutdown()
    }

    /// A room whose inbox is `directory/inbox`; its events are collected.
    func startRoom(limits: Inbox.Limits = Inbox.Limits(), events: Log<RoomServer.Event>) throws -> (RoomServer, Inbox) {
        var options = RoomServer.Options(name: "loop")
        let inbox = try Inbox(directory: directory + "/inbox", limits: limits)
        options.inbox = inbox
        let server = RoomServer(options: options, scheduler: serverLoop) { event in events.append(event) }
        let listener = try TCPListener(port: 0)
        listener.start(on: serverLoop) { [serverLoop] socket, peer in server.accept(Connection(socket: socket, peer: peer, loop: serverLoop)) }
        self.listener = listener
        return (server, inbox)
    }

    /// A member that says HELLO; every message it receives lands in `received`, in order.
    func join(_ name: String, received: Log<Message>) async throws -> PeerLink {
        let endpoint = SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: try XCTUnwrap(listener).port)
        let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: clientLoop)
        let link = PeerLink(Connection(socket: socket, peer: winner, loop: clientLoop), handshakeTimeout: nil, heartbeatInterval: .seconds(60))
        clientLoop.runAndWait {
            link.start(onMessage: { message in received.append(message) }, onEnd: { _ in })
            link.send(.hello(.init(capabilities: .beforeStreamedFiles, name: name)))
        }
        links.append(link)
        try await waitUntil { received.all.contains { if case .welcome = $0 { true } else { false } } }
        return link
    }

    /// A sparse file of `size` bytes (zeros), cheap to create, slow enough to hash.
    func sparseFile(_ path: String, size: Int) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(ftruncate(fd, off_t(size)), 0)
        close(fd)
    }

    func errors(_ messages: Log<Message>) -> [UInt16] {
        messages.all.compactMap { if case .error(let code, _) = $0 { code } else { nil } }
    }

    func testRepliesSentWhileTheFileIsHashedMatchNothing() async throws {
        let events = Log<RoomServer.Event>()
        let (server, _) = try startRoom(events: events)
        let received = Log<Message>()
        let member = try await join("m", received: received)
        let path = directory + "/big.bin"
        try sparseFile(path, size: 1 << 30)
        serverLoop.runAndWait { server.perform(.send(to: "m", path: path)) }
        // While the server hashes 1 GiB, its transfer has no id yet: id 0 (or 1) must match nothing.
        clientLoop.runAndWait {
            member.send(.fileResult(id: 0, status: .stored, message: "forged.bin"))
            member.send(.fileAccept(id: 0, offset: 0))
            member.send(.fileResult(id: 1, status: .stored, message: "forged.bin"))
        }
        try await waitUntil { errors(received).count == 3 }
        XCTAssertEqual(errors(received), Array(repeating: ProtocolError.Code.fileProtocol.rawValue, count: 3))
        XCTAssertFalse(received.all.contains { if case .fileOffer = $0 { true } else { false } },
                       "the stray replies were answered before the offer went out")
        XCTAssertFalse(events.all.contains { if case .fileSent = $0 { true } else { false } }, "nothing was reported sent")

        try await waitUntil { received.all.contains { if case .fileOffer = $0 { true } else { false } } }
        let offer = try XCTUnwrap(received.all.lazy.compactMap { if case .fileOffer(let offer) = $0 { offer } else { nil } }.first)
        XCTAssertNotEqual(offer.id, 0)
        clientLoop.runAndWait { _ = member.send(.fileResult(id: offer.id, status: .refused, message: "no thanks")) }
        try await waitUntil { events.all.contains { if case .fileSent = $0 { true } else { false } } }
        let outcome = events.all.lazy.compactMap { if case .fileSent(_, let result) = $0 { result } else { nil } }.first
        guard case .failure(let error) = outcome else { return XCTFail("\(String(describing: outcome))") }
        XCTAssertTrue(error.message.contains("no thanks"), error.message)
    }

    func testAResumedPrefixIsHashedWhileTheRoomKeepsServing() async throws {
        let events = Log<RoomServer.Event>()
        let (_, _) = try startRoom(events: events)
        let sender = Log<Message>()
        let bystander = Log<Message>()
        let member = try await join("sender", received: sender)
        let other = try await join("bystander", received: bystander)
        let digest = (0..<32).map { UInt8($0) }
        let size: UInt64 = 4 << 30
        let key = PartialKey(digest: digest, size: size, sender: "127.0.0.1")
        try sparseFile(directory + "/inbox/.partial/" + key.name, size: 1 << 30)

        let offered = ContinuousClock.now
        clientLoop.runAndWait {
            member.send(.fileOffer(.init(id: 7, size: size, digest: digest, name: "resumed.bin")))
            member.send(.fileChunk(id: 7, data: [1, 2, 3])) // too early: no FILE_ACCEPT yet
        }
        try await Task.sleep(for: .milliseconds(100))
        let lists = bystander.count
        clientLoop.runAndWait { _ = other.send(.who) }
        try await waitUntil { bystander.count > lists }
        let answered = ContinuousClock.now - offered
        XCTAssertFalse(sender.all.contains { if case .fileAccept = $0 { true } else { false } },
                       "the room answered WHO (after \(answered)) while the 1 GiB prefix was still being hashed")

        try await waitUntil { sender.all.contains { if case .fileAccept = $0 { true } else { false } } }
        let accepted = sender.all.compactMap { if case .fileAccept(let id, let offset) = $0 { (id, offset) } else { nil } }
        XCTAssertEqual(accepted.map(\.0), [7])
        XCTAssertEqual(accepted.map(\.1), [1 << 30], "resumes after the data kept")
        XCTAssertEqual(errors(sender), [ProtocolError.Code.fileProtocol.rawValue], "the chunk before FILE_ACCEPT was refused")
    }

    func testAStalledTransferGivesItsSlotBack() async throws {
        var limits = Inbox.Limits()
        limits.transferIdleTimeout = .milliseconds(500)
        let events = Log<RoomServer.Event>()
        let (_, inbox) = try startRoom(limits: limits, events: events)
        let received = Log<Message>()
        let member = try await join("staller", received: received)
        let data = Array("0123456789".utf8)
        clientLoop.runAndWait {
            member.send(.fileOffer(.init(id: 1, size: 100, digest: [UInt8](repeating: 9, count: 32), name: "a.bin")))
            member.send(.fileOffer(.init(id: 2, size: 100, digest: [UInt8](repeating: 8, count: 32), name: "b.bin")))
            member.send(.fileChunk(id: 2, data: data[...]))
        }
        try await waitUntil { inbox.activeTransfers == 2 }
        let results = { received.all.compactMap { if case .fileResult(let id, let status, let text) = $0 { (id, status, text) } else { nil } } }
        try await waitUntil { results().count == 2 }
        XCTAssertEqual(results().map(\.0).sorted(), [1, 2])
        XCTAssertEqual(Set(results().map(\.1)), [.refused])
        XCTAssertEqual(results().sorted { $0.0 < $1.0 }.map(\.2), [
            "no data arrived for 500 ms; the data so far is kept, and sending the file again resumes",
            "less than 100 bytes arrived in 500 ms; the data so far is kept, and sending the file again resumes", // a trickle is not progress
        ])
        try await waitUntil { inbox.activeTransfers == 0 }
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory + "/inbox/.partial")
        XCTAssertEqual(kept, [PartialKey(digest: [UInt8](repeating: 8, count: 32), size: 100, sender: "127.0.0.1").name],
                       "the empty partial is gone, the one with data is kept")
    }

    /// What a member or the room received, in order; shared with the queues that append.
    final class Log<Item: Sendable>: Sendable {
        private let items = Mutex<[Item]>([])
        func append(_ item: Item) { items.withLock { $0.append(item) } }
        var all: [Item] { items.withLock { $0 } }
        var count: Int { items.withLock { $0.count } }
    }
}
