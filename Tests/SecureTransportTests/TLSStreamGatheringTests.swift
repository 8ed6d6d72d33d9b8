import MessagingTesting
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// After the handshake, small sends of one turn are gathered and encrypted together at its end
/// (`send(writing:)` encodes into that buffer): at the outbox limit and one byte over it, empty
/// sends, sends after the end, the order against large sends, and what `bufferedByteCount` and
/// `sentByteCount` say meanwhile.
final class TLSStreamGatheringTests: XCTestCase {
    let scheduler = ManualScheduler()
    static let serverIdentity = try! Identity.ephemeral()
    static let clientIdentity = try! Identity.ephemeral()

    /// A client and a server whose handshake is done and whose outboxes are empty; each
    /// ciphertext send of the client's wrapped stream is counted in `writes`.
    final class Link {
        let client: TLSStream
        let server: TLSStream
        let wrapped: InMemoryStream
        let clientEnd: Endpoint
        let serverEnd: Endpoint
        var writes: [Int] = []

        init(client: TLSStream, server: TLSStream, wrapped: InMemoryStream) {
            self.client = client
            self.server = server
            self.wrapped = wrapped
            clientEnd = Endpoint(client)
            serverEnd = Endpoint(server)
        }
    }

    /// `limit`: both the client's wrapped stream's outbox limit and the client's own.
    func connected(limit: Int = 4 << 20) throws -> Link {
        let pair = InMemoryStream.pair(scheduler: scheduler, outboxLimit: limit)
        let client = try TLSStream(over: pair.0, scheduler: scheduler, identity: Self.clientIdentity,
                                   role: .client(acceptsServerKey: { _ in true }), outboxLimit: limit)
        let server = try TLSStream(over: pair.1, scheduler: scheduler, identity: Self.serverIdentity, role: .server)
        let link = Link(client: client, server: server, wrapped: pair.0)
        scheduler.run()
        XCTAssertNotNil(client.secureSession)
        XCTAssertEqual(client.bufferedByteCount, 0)
        pair.0.tap = { [unowned link] in link.writes.append($0.count) }
        return link
    }

    func testSmallSendsOfOneTurnBecomeOneRecordAtItsEnd() throws {
        let link = try connected()
        let sentBefore = link.client.sentByteCount
        var expected: [UInt8] = []
        for index in 0..<100 {
            let message = [UInt8](repeating: UInt8(index), count: 64)
            expected += message
            if index % 2 == 0 {
                XCTAssertTrue(link.client.send(message))
            } else {
                XCTAssertTrue(link.client.send(writing: { $0 += message }))
            }
        }
        XCTAssertEqual(link.writes, [], "nothing is encrypted before the turn ends")
        XCTAssertEqual(link.client.bufferedByteCount, 6400 + TLSStream.recordOverhead, "gathered bytes count as the record they become")
        let mark = link.client.sentByteCount + link.client.bufferedByteCount
        scheduler.run()
        XCTAssertEqual(link.writes, [6400 + TLSStream.recordOverhead], "one record, one write to the wrapped stream")
        XCTAssertEqual(link.serverEnd.received, expected)
        XCTAssertEqual(link.client.bufferedByteCount, 0)
        XCTAssertEqual(link.client.sentByteCount, mark, "what was counted as queued has left exactly when the count says so")
        XCTAssertEqual(link.client.sentByteCount - sentBefore, 6400 + TLSStream.recordOverhead)
    }

    func testGatheringUpToExactlyTheLimitIsAcceptedAndOneByteMoreFailsTheStream() throws {
        let limit = 10_000
        let atLimit = limit - TLSStream.recordOverhead // one record of this much plaintext fills the outbox exactly
        let link = try connected(limit: limit)
        XCTAssertTrue(link.client.send([UInt8](repeating: 1, count: atLimit - 100)))
        XCTAssertTrue(link.client.send(writing: { $0 += [UInt8](repeating: 2, count: 100) }))
        XCTAssertEqual(link.client.bufferedByteCount, limit)
        XCTAssertTrue(link.client.isOpen)
        scheduler.run()
        XCTAssertEqual(link.writes, [limit], "the record fills the wrapped stream's outbox exactly, and it takes it")
        XCTAssertEqual(link.serverEnd.received.count, atLimit)
        XCTAssertTrue(link.client.isOpen)

        // One byte over: not gathered but encrypted at once, and the wrapped stream refuses it then.
        let over = try connected(limit: limit)
        XCTAssertTrue(over.client.send([UInt8](repeating: 1, count: atLimit - 100)))
        XCTAssertFalse(over.client.send(writing: { $0 += [UInt8](repeating: 2, count: 101) }), "the send that passes the limit fails")
        XCTAssertFalse(over.client.isOpen)
        assertFailed(over.clientEnd, saying: "more than \(limit) bytes are waiting")
        XCTAssertFalse(over.client.send([3]))
        scheduler.run()
        XCTAssertEqual(over.clientEnd.closed.count, 1, "the end is reported once")
    }

    func testOneByteOverTheLimitInOneSendFailsAtOnce() throws {
        let limit = 10_000
        let link = try connected(limit: limit)
        XCTAssertFalse(link.client.send([UInt8](repeating: 1, count: limit - TLSStream.recordOverhead + 1)))
        assertFailed(link.clientEnd, saying: "more than \(limit) bytes are waiting")
    }

    func testEmptySendsQueueNothing() throws {
        let link = try connected()
        XCTAssertTrue(link.client.send([]))
        XCTAssertTrue(link.client.send(writing: { _ in }))
        XCTAssertEqual(link.client.bufferedByteCount, 0)
        XCTAssertEqual(scheduler.pendingJobCount, 0, "no flush is scheduled for nothing")
        XCTAssertTrue(link.client.send([9]))
        XCTAssertTrue(link.client.send(writing: { _ in }))
        scheduler.run()
        XCTAssertEqual(link.writes, [1 + TLSStream.recordOverhead])
        XCTAssertEqual(link.serverEnd.received, [9])
    }

    func testSendsAfterCloseOrFinishFailAndGatheredBytesAreDroppedOrSentAccordingly() throws {
        let closed = try connected()
        XCTAssertTrue(closed.client.send([1, 2, 3]))
        closed.client.close()
        var called = false
        XCTAssertFalse(closed.client.send([4]))
        XCTAssertFalse(closed.client.send(writing: { called = true; $0 += [5] }))
        XCTAssertFalse(called, "a closed stream does not ask for bytes")
        XCTAssertEqual(closed.client.bufferedByteCount, 0)
        scheduler.run()
        XCTAssertEqual(closed.serverEnd.received, [], "close drops what was gathered")
        XCTAssertEqual(closed.clientEnd.closed, [.closedLocally])

        let finished = try connected()
        XCTAssertTrue(finished.client.send([1, 2, 3]))
        XCTAssertTrue(finished.client.send(writing: { $0 += [4] }))
        finished.client.finish()
        XCTAssertFalse(finished.client.send([5]))
        XCTAssertFalse(finished.client.send(writing: { $0 += [6] }))
        scheduler.run()
        XCTAssertEqual(finished.serverEnd.received, [1, 2, 3, 4], "finish sends what was gathered before close_notify")
        XCTAssertEqual(finished.serverEnd.closed, [.closedByPeer])
    }

    func testLargeSendsGoAtOnceBehindWhatWasGatheredAndGatheringStopsAtSixtyFourKiB() throws {
        let link = try connected()
        XCTAssertTrue(link.client.send([7]))
        let large = [UInt8](repeating: 8, count: TLSStream.gatherLimit)
        XCTAssertTrue(link.client.send(large))
        XCTAssertEqual(link.writes.first, 1 + TLSStream.recordOverhead, "the gathered byte went first")
        XCTAssertEqual(link.writes.dropFirst().reduce(0, +), TLSStream.ciphertextSize(ofPlaintext: large.count))
        scheduler.run()
        XCTAssertEqual(link.serverEnd.received, [7] + large)

        link.writes = []
        let message = [UInt8](repeating: 9, count: 1000)
        var sent = 0
        while sent < TLSStream.gatherLimit {
            XCTAssertTrue(link.client.send(writing: { $0 += message }))
            sent += message.count
        }
        XCTAssertEqual(link.writes.reduce(0, +), TLSStream.ciphertextSize(ofPlaintext: sent),
                       "64 KiB gathered are encrypted without waiting for the turn's end")
        XCTAssertLessThanOrEqual(link.writes.count, 2, "whole records, a few at a time")
        XCTAssertEqual(link.client.bufferedByteCount, link.wrapped.bufferedByteCount, "nothing is left gathered")
        scheduler.run()
        XCTAssertEqual(link.serverEnd.received.count, 1 + large.count + sent)
    }

    func testADrainHandlerWaitsForGatheredBytes() throws {
        let link = try connected()
        var drains = 0
        link.client.whenDrained { drains += 1 }
        XCTAssertTrue(link.client.send([UInt8](repeating: 1, count: 100)))
        scheduler.run()
        XCTAssertEqual(link.client.bufferedByteCount, 0)
        XCTAssertGreaterThanOrEqual(drains, 1, "the outbox emptied once the gathered record left")
    }
}
