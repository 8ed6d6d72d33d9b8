import MessagingTesting
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// Reading paused by the upper layer bounds what a TLS stream holds, whatever the peer sends:
/// the wrapped stream is read again only once what waited is fed (attacks15y finding 1: small
/// frames grew a room by ~190 KiB each pause).
final class TLSStreamBackPressureTests: XCTestCase {
    let scheduler = ManualScheduler()
    static let serverIdentity = try! Identity.ephemeral()
    static let clientIdentity = try! Identity.ephemeral()
    /// What one read of the wrapped stream hands over (InMemoryStream's default, like
    /// Connection's largest read).
    static let readSize = 262_144
    /// One read, one slice fed to OpenSSL and one record decrypted and not yet taken.
    static let heldBound = readSize + TLSStream.ciphertextSlice + TLSStream.recordSize

    func connect() throws -> (client: TLSStream, server: TLSStream) {
        let pair = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: Self.readSize)
        let client = try TLSStream(over: pair.0, scheduler: scheduler, identity: Self.clientIdentity, role: .client(acceptsServerKey: { _ in true }))
        let server = try TLSStream(over: pair.1, scheduler: scheduler, identity: Self.serverIdentity, role: .server)
        return (client, server)
    }

    func testSmallFramesFromAFastPeerKeepWhatTLSHoldsUnderOneReadAndOneSlice() throws {
        let (client, server) = try connect()
        let clientEnd = Endpoint(client)
        let frames = 10_000_000 / FrameTurns.frameSize
        let reader = FrameTurns(server, scheduler: scheduler)
        let producer = Producer(client, FrameTurns.frames(count: frames), finishes: true)
        producer.pump()
        while scheduler.run() > 0 {}
        XCTAssertNil(reader.outOfOrder, "frames arrive whole and in order")
        XCTAssertEqual(reader.handled, frames)
        XCTAssertGreaterThan(reader.pauses, 1000, "the upper layer paused many times")
        XCTAssertLessThanOrEqual(reader.peakHeld, Self.heldBound, "what TLS holds stays bounded")
        XCTAssertEqual(reader.closed, [.closedByPeer], "the peer's end inside what waited comes after every frame")
        XCTAssertEqual(clientEnd.closed, [.closedByPeer])
    }

    func testDataThatCameWithTheHandshakeWaitsForAPauseBeforeItAndIsThenDelivered() throws {
        let (client, server) = try connect()
        let clientEnd = Endpoint(client)
        let frames = 100_000
        let reader = FrameTurns(server, scheduler: scheduler)
        server.pauseReading()
        let producer = Producer(client, FrameTurns.frames(count: frames))
        producer.pump()
        while scheduler.run() > 0 {}
        XCTAssertNotNil(server.secureSession, "the handshake goes on while paused")
        XCTAssertEqual(reader.handled, 0, "nothing is handed over while paused")
        XCTAssertLessThanOrEqual(server.heldIncomingByteCount, Self.heldBound)
        server.resumeReading()
        while scheduler.run() > 0 {}
        XCTAssertNil(reader.outOfOrder)
        XCTAssertEqual(reader.handled, frames, "reading resumed and everything came")
        XCTAssertEqual(reader.closed, [])
        XCTAssertEqual(clientEnd.closed, [])
    }

    func testClosingWhilePausedWithCiphertextWaitingEndsOnceAndDeliversNothingMore() throws {
        let (client, server) = try connect()
        let clientEnd = Endpoint(client)
        let reader = FrameTurns(server, scheduler: scheduler)
        reader.stopsAfterTurns = 3
        let producer = Producer(client, FrameTurns.frames(count: 200_000))
        producer.pump()
        while scheduler.run() > 0 {}
        XCTAssertGreaterThan(server.heldIncomingByteCount, 0, "ciphertext waits while paused")
        let handled = reader.handled
        server.resumeReading()
        server.close()
        while scheduler.run() > 0 {}
        XCTAssertEqual(reader.handled, handled, "nothing after the close")
        XCTAssertEqual(reader.closed, [.closedLocally])
        XCTAssertEqual(clientEnd.closed.count, 1, "the peer learns of it")
    }
}

/// An upper layer like `PeerLink`: takes each chunk into its own buffer, handles at most
/// `framesPerTurn` frames a turn, holds reading while whole frames wait and resumes once none
/// does. Checks the frames' order and records the most TLS held at any turn.
final class FrameTurns {
    static let frameSize = 13
    static let framesPerTurn = 64

    /// `count` frames: a marker byte, the frame's number (8 bytes, big-endian) and 4 bytes of it.
    static func frames(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * frameSize)
        for number in 0..<UInt64(count) {
            bytes.append(0xF7)
            withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: number).bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    let stream: TLSStream
    let scheduler: ManualScheduler
    private var buffer: [UInt8] = []
    private var start = 0
    private var isTurnScheduled = false
    private(set) var handled = 0
    private(set) var pauses = 0
    private(set) var peakHeld = 0
    private(set) var closed: [Connection.CloseReason] = []
    /// The first frame that was not the next one, if any.
    private(set) var outOfOrder: Int?
    /// Stops handling (reading stays paused) after this many turns.
    var stopsAfterTurns = Int.max
    private var turns = 0

    init(_ stream: TLSStream, scheduler: ManualScheduler) {
        self.stream = stream
        self.scheduler = scheduler
        stream.start(onBytes: { [unowned self] in take($0) }, onClose: { [unowned self] in closed.append($0) })
    }

    private func take(_ chunk: [UInt8]) {
        buffer.append(contentsOf: chunk)
        peakHeld = max(peakHeld, stream.heldIncomingByteCount)
        if !isTurnScheduled { turn() }
    }

    private func turn() {
        isTurnScheduled = false
        turns += 1
        guard turns <= stopsAfterTurns else { return }
        var count = 0
        while count < Self.framesPerTurn, buffer.count - start >= Self.frameSize {
            check(buffer[start..<start + Self.frameSize])
            start += Self.frameSize
            count += 1
        }
        peakHeld = max(peakHeld, stream.heldIncomingByteCount)
        if buffer.count - start >= Self.frameSize {
            stream.pauseReading()
            pauses += 1
            isTurnScheduled = true
            scheduler.execute { [weak self] in self?.turn() }
        } else {
            buffer.removeSubrange(..<start)
            start = 0
            stream.resumeReading()
        }
    }

    private func check(_ frame: ArraySlice<UInt8>) {
        defer { handled += 1 }
        guard outOfOrder == nil else { return }
        let number = frame.dropFirst().prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = frame.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if frame.first != 0xF7 || number != UInt64(handled) || low != UInt32(truncatingIfNeeded: number) { outOfOrder = handled }
    }
}
