import Foundation
import Glibc
import MessagingTesting
import Synchronization
import TransportCore
import TransportPOSIX
import XCTest

/// Connection on its event loop: reading pauses and resumes, and a loop that shuts down closes
/// its connections as closed locally.
final class ConnectionLoopTests: XCTestCase {
    let loop = try! EventLoop(name: "test-connection")

    override func tearDown() {
        loop.shutdown()
    }

    /// A connected pair on the loop: the server's end as accepted, the client's end connected.
    private func connectedPair() async throws -> (server: Connection, client: Connection, listener: TCPListener) {
        let (server, client, winner, listener) = try await acceptedPair()
        return (Connection(socket: server, peer: nil, loop: loop), Connection(socket: client, peer: winner, loop: loop), listener)
    }

    /// The sockets of such a pair, before either is a `Connection`.
    private func acceptedPair() async throws -> (server: Socket, client: Socket, winner: SocketEndpoint, listener: TCPListener) {
        let listener = try TCPListener(port: 0)
        let accepted = AsyncStream<Socket>.makeStream()
        listener.start(on: loop) { socket, _ in accepted.continuation.yield(socket) }
        let (socket, winner) = try await TCPConnector.connect(to: [SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)],
                                                             on: loop)
        // The loop's thread accepts: bounded, so that a bug fails the test instead of hanging the run.
        let stream = accepted.stream
        let first = try await withTimeout("the accept") {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        guard let serverSocket = first else { throw TransportError("accept", message: "nothing accepted") }
        return (serverSocket, socket, winner, listener)
    }

    /// A listener's `sendBuffer` is each accepted socket's SO_SNDBUF (doubled by Linux).
    func testAcceptedSocketsHaveTheListenersSendBuffer() async throws {
        let listener = try TCPListener(port: 0, sendBuffer: 64 << 10)
        defer { listener.cancel() }
        let accepted = AsyncStream<Socket>.makeStream()
        listener.start(on: loop) { socket, _ in accepted.continuation.yield(socket) }
        let (client, _) = try await TCPConnector.connect(to: [SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)], on: loop)
        defer { client.close() }
        let stream = accepted.stream
        let first = try await withTimeout("the accept") {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        let server = try XCTUnwrap(first)
        defer { server.close() }
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(getsockopt(server.fd, SOL_SOCKET, SO_SNDBUF, &size, &length), 0)
        XCTAssertEqual(size, 128 << 10)
    }

    func testPausedReadingDeliversNothingUntilResumed() async throws {
        let (server, client, listener) = try await connectedPair()
        defer { listener.cancel() }
        let received = Mutex(0)
        let first = expectation(description: "first bytes")
        let loop = loop
        loop.execute {
            server.start(onBytes: { bytes in
                let total = received.withLock { $0 += bytes.count; return $0 }
                if total == 3 { first.fulfill() }
            }, onClose: { _ in })
            client.start(onBytes: { _ in }, onClose: { _ in })
            client.send(Array("abc".utf8))
        }
        await fulfillment(of: [first], timeout: 5)
        loop.runAndWait {
            server.pauseReading()
            client.send(Array("def".utf8))
        }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(received.withLock { $0 }, 3, "bytes arrived while reading was paused")
        loop.runAndWait { server.resumeReading() }
        for _ in 0..<500 where received.withLock({ $0 }) < 6 { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(received.withLock { $0 }, 6)
        loop.runAndWait {
            server.close()
            client.close()
        }
    }

    /// `sendNow` writes at once, behind what was gathered, however small (a TLS stream's records
    /// at the end of a turn); `send` of a few bytes waits for the end of the iteration.
    func testSendNowWritesAtOnceBehindWhatWasGathered() async throws {
        let (server, client, listener) = try await connectedPair()
        defer { listener.cancel() }
        let received = Mutex<[UInt8]>([])
        let all = expectation(description: "all bytes")
        let counts = loop.runAndWait { () -> [Int] in
            server.start(onBytes: { bytes in
                let total = received.withLock { $0 += bytes; return $0.count }
                if total == 4 { all.fulfill() }
            }, onClose: { _ in })
            client.start(onBytes: { _ in }, onClose: { _ in })
            client.send([1, 2, 3])
            let gathered = [client.sentByteCount, client.bufferedByteCount]
            let sent = [UInt8(4)].withUnsafeBytes { client.sendNow($0) }
            return gathered + [client.sentByteCount, client.bufferedByteCount, sent ? 1 : 0]
        }
        XCTAssertEqual(counts, [0, 3, 4, 0, 1], "gathered, then written at once with what waited")
        await fulfillment(of: [all], timeout: 5)
        XCTAssertEqual(received.withLock { $0 }, [1, 2, 3, 4])
        let afterClose = loop.runAndWait { () -> Bool in
            client.close()
            return [UInt8(5)].withUnsafeBytes { client.sendNow($0) }
        }
        XCTAssertFalse(afterClose)
        loop.runAndWait { server.close() }
    }

    /// A client connection with a 256 KiB send buffer that queued 3 MiB to a peer with a
    /// receive buffer of `receiveBuffer` bytes that reads nothing (the test reads `reader` by
    /// hand): after 300 ms both kernels' buffers are full and the rest waits in the outbox.
    private func aReaderThatStoppedWithEverythingFull(receiveBuffer: Int32 = 8192) async throws -> (reader: Socket, client: Connection, listener: TCPListener) {
        let (reader, socket, winner, listener) = try await acceptedPair()
        var small = receiveBuffer, large: Int32 = 256 << 10
        XCTAssertEqual(setsockopt(reader.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size)), 0)
        XCTAssertEqual(setsockopt(socket.fd, SOL_SOCKET, SO_SNDBUF, &large, socklen_t(MemoryLayout<Int32>.size)), 0)
        let client = Connection(socket: socket, peer: winner, loop: loop)
        loop.runAndWait {
            client.start(onBytes: { _ in }, onClose: { _ in })
            client.send([UInt8](repeating: 7, count: 3 << 20))
        }
        try await Task.sleep(for: .milliseconds(300))
        return (reader, client, listener)
    }

    /// Reads about `wanted` bytes from `socket` by hand (for up to a second); returns how many.
    private func read(_ wanted: Int, from socket: Socket) async throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var taken = 0
        for _ in 0..<200 where taken < wanted {
            let count = Glibc.read(socket.fd, &buffer, buffer.count)
            if count > 0 { taken += count } else { try await Task.sleep(for: .milliseconds(5)) }
        }
        return taken
    }

    /// The outbox lets go of what the kernel took: a peer that read all but a little leaves it
    /// holding about that little (it had kept all it was sent, counted as holding little).
    func testAnOutboxDrainedToALittleHoldsAboutThatLittle() async throws {
        // The reader's buffer no smaller than loopback's segments: with a few KiB its window
        // updates lag and the sender falls back to probing a closed window.
        let (reader, client, listener) = try await aReaderThatStoppedWithEverythingFull(receiveBuffer: 128 << 10)
        defer { listener.cancel() }
        let start = loop.runAndWait { [client.bufferedByteCount, client.heldByteCount] }
        XCTAssertGreaterThan(start[0], 2 << 20, "most of the 3 MiB waits in the outbox")
        XCTAssertGreaterThanOrEqual(start[1], start[0])
        var buffer = [UInt8](repeating: 0, count: 65536)
        var waiting = start[0]
        for _ in 0..<5000 where waiting > 512 << 10 {
            if Glibc.read(reader.fd, &buffer, buffer.count) <= 0 { try await Task.sleep(for: .milliseconds(1)) }
            waiting = loop.runAndWait { client.bufferedByteCount }
        }
        try await Task.sleep(for: .milliseconds(100))
        let end = loop.runAndWait { [client.bufferedByteCount, client.heldByteCount] }
        XCTAssertGreaterThan(end[0], 0, "some still waits: the reader stopped")
        XCTAssertLessThanOrEqual(end[1], 4 * (end[0] + (16 << 10)), "held \(end[1]) for \(end[0]) waiting")
        XCTAssertLessThan(end[1], start[1] / 2, "held \(end[1]), at first \(start[1])")
        loop.runAndWait { client.close() }
        reader.close()
    }

    /// A peer that reads a little frees less of our send buffer than Linux waits for before it
    /// reports the socket writable (about a third), so nothing more is written and the count
    /// stays; `offerQueuedBytes` writes what fits now. (Stall checks rely on it: a peer reading
    /// a few KB a second must not seem to read nothing.)
    func testOfferingQueuedBytesWritesWhatASlowReaderFreedBeforeTheLoopIsTold() async throws {
        let (reader, client, listener) = try await aReaderThatStoppedWithEverythingFull()
        defer { listener.cancel() }
        let full = loop.runAndWait { [client.sentByteCount, client.bufferedByteCount] }
        XCTAssertGreaterThan(full[1], 0, "the kernel's buffers are full")
        let taken = try await read(32768, from: reader)
        XCTAssertGreaterThan(taken, 0)
        try await Task.sleep(for: .milliseconds(300))
        let told = loop.runAndWait { client.sentByteCount }
        XCTAssertEqual(told, full[0], "the loop was not told there is room: nothing more was written")
        let offered = loop.runAndWait { () -> Int in
            client.offerQueuedBytes()
            return client.sentByteCount
        }
        XCTAssertGreaterThan(offered, full[0], "what the reader freed was taken")
        loop.runAndWait { client.close() }
        reader.close()
    }

    /// `deliveredByteCount` is what the peer's end took, not what our kernel took: with the
    /// peer's receive buffer full, bytes written into our free send buffer raise
    /// `sentByteCount` only; it rises again when the peer reads, and never passes it.
    func testTheDeliveredCountMovesOnlyWhenThePeerTakesBytes() async throws {
        let (reader, client, listener) = try await aReaderThatStoppedWithEverythingFull()
        defer { listener.cancel() }
        let full = loop.runAndWait { [client.sentByteCount, client.deliveredByteCount] }
        XCTAssertGreaterThan(full[1], 0, "the reader's kernel took its buffer's worth")
        XCTAssertLessThan(full[1], full[0], "what waits in our own send buffer is not delivered")
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(loop.runAndWait { client.deliveredByteCount }, full[1], "a reader that reads nothing takes nothing more")
        let taken = try await read(32768, from: reader)
        XCTAssertGreaterThan(taken, 0, "the reader read")
        var delivered = full[1]
        for _ in 0..<200 where delivered <= full[1] {
            try await Task.sleep(for: .milliseconds(5))
            delivered = loop.runAndWait { client.deliveredByteCount }
        }
        XCTAssertGreaterThan(delivered, full[1], "what the reader read made room its kernel took")
        XCTAssertLessThanOrEqual(delivered, loop.runAndWait { client.sentByteCount })
        loop.runAndWait { client.close() }
        reader.close()
    }

    func testShuttingTheLoopDownClosesItsConnectionsLocally() async throws {
        let (server, client, listener) = try await connectedPair()
        defer { listener.cancel() }
        let reasons = Mutex<[Connection.CloseReason]>([])
        loop.runAndWait {
            for connection in [server, client] {
                connection.start(onBytes: { _ in }, onClose: { reason in reasons.withLock { $0.append(reason) } })
            }
        }
        loop.shutdown()
        XCTAssertEqual(reasons.withLock { $0 }, [.closedLocally, .closedLocally])
        XCTAssertTrue(server.isClosed && client.isClosed)
    }
}
