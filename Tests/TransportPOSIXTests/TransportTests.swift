import Dispatch
import Glibc
import TransportCore
import TransportPOSIX
import XCTest

final class TransportTests: XCTestCase {
    let loopback4 = IPAddress(bytes: [127, 0, 0, 1])!
    let loopback6 = IPAddress(bytes: Array(repeating: 0, count: 15) + [1])!
    let loop = try! EventLoop(name: "test.transport")

    override func tearDown() {
        loop.shutdown()
    }

    /// A listener whose connections echo bytes back, ASCII letters in upper case.
    func startShoutingServer() throws -> TCPListener {
        let listener = try TCPListener(port: 0)
        let loop = loop
        listener.start(on: loop) { socket, peer in
            let connection = Connection(socket: socket, peer: peer, loop: loop)
            connection.start(onBytes: { bytes in
                connection.send(bytes.map { (97...122).contains($0) ? $0 - 32 : $0 })
            }, onClose: { _ in })
        }
        return listener
    }

    func testListenerPicksAFreePortOnBothFamilies() throws {
        let listener = try startShoutingServer()
        defer { listener.cancel() }
        XCTAssertNotEqual(listener.port, 0)
        XCTAssertTrue(listener.acceptsIPv6)
        for address in [loopback4, loopback6] {
            XCTAssertEqual(try roundTrip("hello", to: SocketEndpoint(address: address, port: listener.port)), "HELLO")
        }
    }

    func testBindConflictNamesTheCallAndErrno() throws {
        let first = try TCPListener(port: 0)
        defer { first.cancel() }
        XCTAssertThrowsError(try TCPListener(port: first.port)) { error in
            XCTAssertEqual("\(error)", "bind: Address already in use (errno 98)")
        }
    }

    func testHappyEyeballsSkipsARefusingAddress() async throws {
        let listener = try startShoutingServer()
        defer { listener.cancel() }
        let closedPort = try TCPListener(port: 0)
        let refusing = SocketEndpoint(address: loopback6, port: closedPort.port)
        closedPort.cancel()
        let working = SocketEndpoint(address: loopback4, port: listener.port)
        let (socket, winner) = try await TCPConnector.connect(to: [refusing, working], on: loop)
        socket.close()
        XCTAssertEqual(winner, working)
    }

    /// Bound to lo, the connection reaches an address on lo; bound to an interface that does
    /// not exist, it is not made at all (never unbound).
    func testAConnectionBoundToAnInterfaceUsesOnlyThatInterface() async throws {
        let listener = try startShoutingServer()
        defer { listener.cancel() }
        let endpoint = SocketEndpoint(address: loopback4, port: listener.port)
        let (socket, winner) = try await TCPConnector.connect(to: [endpoint], interface: "lo", on: loop)
        socket.close()
        XCTAssertEqual(winner, endpoint)
        do {
            _ = try await TCPConnector.connect(to: [endpoint], interface: "nosuch0", on: loop)
            XCTFail("connected although the interface does not exist")
        } catch {
            XCTAssertEqual("\(error)", "connect: could not connect to 127.0.0.1:\(listener.port) (setsockopt(SO_BINDTODEVICE): No such device (errno 19))")
            XCTAssertEqual((error as? TransportError)?.isRefused, false, "no address refused")
        }
    }

    func testHappyEyeballsReportsEveryFailure() async throws {
        let closed = try TCPListener(port: 0)
        let port = closed.port
        closed.cancel()
        do {
            _ = try await TCPConnector.connect(to: [SocketEndpoint(address: loopback6, port: port), SocketEndpoint(address: loopback4, port: port)], on: loop)
            XCTFail("nothing listens")
        } catch {
            XCTAssertEqual("\(error)", "connect: could not connect to [::1]:\(port) (Connection refused), 127.0.0.1:\(port) (Connection refused)")
            XCTAssertEqual((error as? TransportError)?.isRefused, true, "every address refused")
        }
    }

    func testPeerCloseIsReportedAsClosedByPeerAfterTheLastLine() async throws {
        let listener = try TCPListener(port: 0)
        defer { listener.cancel() }
        let loop = loop
        listener.start(on: loop) { socket, peer in
            let connection = Connection(socket: socket, peer: peer, loop: loop)
            connection.start(onBytes: { _ in }, onClose: { _ in })
            connection.send(Array("bye\nunterminated".utf8))
            connection.finish()
        }
        let (socket, winner) = try await TCPConnector.connect(to: [SocketEndpoint(address: loopback4, port: listener.port)], on: loop)
        let got = expectation(description: "closed")
        let received = Received()
        loop.execute {
            var framer = LineFramer()
            let connection = Connection(socket: socket, peer: winner, loop: loop)
            connection.start(onBytes: { bytes in
                received.lines += (try? framer.feed(bytes))?.map { String(decoding: $0, as: UTF8.self) } ?? []
            }, onClose: { reason in
                if let last = framer.finish() { received.lines.append(String(decoding: last, as: UTF8.self)) }
                received.reason = reason
                got.fulfill()
            })
        }
        await fulfillment(of: [got], timeout: 5)
        XCTAssertEqual(received.lines, ["bye", "unterminated"])
        XCTAssertEqual(received.reason, .closedByPeer)
    }

    func testSmallAndLargeSendsArriveInTheOrderSent() async throws {
        let listener = try TCPListener(port: 0)
        defer { listener.cancel() }
        let loop = loop
        // Small sends are gathered into one write, large ones written at once: interleaved,
        // the bytes must still arrive in order.
        var expected: [UInt8] = []
        var pieces: [[UInt8]] = []
        for index in 0..<200 {
            let piece = [UInt8](repeating: UInt8(index), count: index % 10 == 9 ? 100_000 : 1 + index)
            pieces.append(piece)
            expected += piece
        }
        listener.start(on: loop) { [pieces] socket, peer in
            let connection = Connection(socket: socket, peer: peer, loop: loop, outboxLimit: 64 << 20)
            connection.start(onBytes: { _ in }, onClose: { _ in })
            for (index, piece) in pieces.enumerated() {
                switch index % 3 {
                case 0: connection.send(piece)
                case 1: piece.withUnsafeBytes { _ = connection.send($0) }
                default: connection.send { $0.append(contentsOf: piece) } // encoded into the outbox
                }
            }
            connection.finish()
        }
        let (socket, winner) = try await TCPConnector.connect(to: [SocketEndpoint(address: loopback4, port: listener.port)], on: loop)
        let got = expectation(description: "closed")
        let received = Received()
        loop.execute {
            let connection = Connection(socket: socket, peer: winner, loop: loop)
            connection.start(onBytes: { received.bytes += $0 }, onClose: { _ in got.fulfill() })
        }
        await fulfillment(of: [got], timeout: 10)
        XCTAssertEqual(received.bytes.count, expected.count)
        XCTAssertTrue(received.bytes == expected, "bytes arrived out of order")
    }

    func testAPeerThatDoesNotReadCannotGrowTheOutboxPastItsLimit() async throws {
        let listener = try TCPListener(port: 0)
        defer { listener.cancel() }
        let accepted = Received()
        listener.start(on: loop) { socket, _ in accepted.sockets.append(socket) } // never reads
        let (socket, winner) = try await TCPConnector.connect(to: [SocketEndpoint(address: loopback4, port: listener.port)], on: loop)
        let closed = expectation(description: "closed")
        let received = Received()
        let loop = loop
        loop.execute {
            let connection = Connection(socket: socket, peer: winner, loop: loop, outboxLimit: 1 << 20)
            connection.start(onBytes: { _ in }, onClose: { reason in
                received.reason = reason
                closed.fulfill()
            })
            let chunk = [UInt8](repeating: 7, count: 64 * 1024)
            var sent = 0
            // Both ways in: bytes given, and bytes written into the outbox (taken back when over).
            while sent % (2 * chunk.count) == 0 ? connection.send(chunk) : connection.send(writing: { $0.append(contentsOf: chunk) }) {
                sent += chunk.count
            }
            received.lines.append(String(sent))
            XCTAssertLessThanOrEqual(connection.bufferedByteCount, 1 << 20)
        }
        await fulfillment(of: [closed], timeout: 10)
        guard case .failed(let error) = received.reason else { return XCTFail("expected a failure, got \(String(describing: received.reason))") }
        XCTAssertTrue("\(error)".contains("the peer is not reading"))
    }

    /// Connects, sends a line and returns what comes back up to its newline.
    func roundTrip(_ line: String, to endpoint: SocketEndpoint) throws -> String? {
        let done = expectation(description: "reply")
        let received = Received()
        let loop = loop
        Task {
            let (socket, winner) = try await TCPConnector.connect(to: [endpoint], on: loop)
            loop.execute {
                var framer = LineFramer()
                let connection = Connection(socket: socket, peer: winner, loop: loop)
                connection.start(onBytes: { bytes in
                    guard let reply = (try? framer.feed(bytes))?.first else { return }
                    received.lines.append(String(decoding: reply, as: UTF8.self))
                    connection.close()
                }, onClose: { _ in done.fulfill() })
                connection.send(Array((line + "\n").utf8))
            }
        }
        wait(for: [done], timeout: 5)
        return received.lines.first
    }
}

/// Collects what the connection loop saw; read after an expectation is fulfilled.
private final class Received: @unchecked Sendable {
    var lines: [String] = []
    var bytes: [UInt8] = []
    var reason: Connection.CloseReason?
    var sockets: [Socket] = []
}
