import MessagingTesting
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// The server's first-byte decision: TLS, plaintext allowed, plaintext refused; what the room
/// sends before the decision takes the chosen path.
final class NegotiatingServerStreamTests: XCTestCase {
    let scheduler = ManualScheduler()
    let refusal = Array("\u{0}\u{0}\u{0}\u{5}nope!".utf8)
    var serverIdentity: Identity { TLSStreamTests.serverIdentity }
    var clientIdentity: Identity { TLSStreamTests.clientIdentity }

    func negotiating(over stream: InMemoryStream, allowsPlaintext: Bool) -> NegotiatingServerStream {
        NegotiatingServerStream(over: stream, scheduler: scheduler, identity: serverIdentity,
                                allowsPlaintext: allowsPlaintext, refusal: refusal)
    }

    func testAClientStartingWithTLSGetsTLSAndTheServersEarlyBytesInsideIt() throws {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        var ciphertextFromServer: [UInt8] = []
        pair.1.tap = { ciphertextFromServer += $0 }
        let server = negotiating(over: pair.1, allowsPlaintext: true)
        let serverEnd = Endpoint(server)
        server.send(Array("HELLO from the room".utf8))
        scheduler.run()
        XCTAssertNil(server.decision)
        XCTAssertEqual(ciphertextFromServer, [], "the server sends nothing before the client's first byte")
        let client = try TLSStream(over: pair.0, scheduler: scheduler, identity: clientIdentity, role: .client(acceptsServerKey: { _ in true }))
        let clientEnd = Endpoint(client)
        client.send(Array("HELLO from the member".utf8))
        scheduler.run()
        XCTAssertEqual(server.decision, .tls)
        XCTAssertFalse(server.isPlaintext)
        XCTAssertEqual(server.secureSession?.peerKey, clientIdentity.fingerprint)
        XCTAssertEqual(server.secureSession?.safetyCode, client.secureSession?.safetyCode)
        XCTAssertEqual(String(decoding: clientEnd.received, as: UTF8.self), "HELLO from the room")
        XCTAssertEqual(String(decoding: serverEnd.received, as: UTF8.self), "HELLO from the member")
        XCTAssertNil(ciphertextFromServer.firstRange(of: Array("HELLO".utf8)), "the room's bytes went inside TLS")
        server.finish()
        scheduler.run()
        XCTAssertEqual(serverEnd.closed, [.closedByPeer])
        XCTAssertEqual(clientEnd.closed, [.closedByPeer])
    }

    func testFinishingBeforeTheClientsFirstByteClosesAtOnce() {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = negotiating(over: pair.1, allowsPlaintext: false)
        let serverEnd = Endpoint(server)
        let client = Endpoint(pair.0)
        server.send(Array("ERROR server-full".utf8))
        server.finish()
        scheduler.run()
        XCTAssertTrue(pair.1.isClosed, "the socket is not held: nothing could be sent before the client chose TLS or plaintext")
        XCTAssertEqual(serverEnd.closed, [.closedLocally])
        XCTAssertEqual(client.received, [], "nothing went out")
    }

    func testPlaintextPassesThroughUnchangedWhenAllowed() {
        let pair = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: 3)
        let server = negotiating(over: pair.1, allowsPlaintext: true)
        let serverEnd = Endpoint(server)
        let client = Endpoint(pair.0)
        server.send(Array("room hello".utf8))
        pair.0.send(Array("member hello".utf8))
        scheduler.run()
        XCTAssertEqual(server.decision, .plaintext)
        XCTAssertTrue(server.isPlaintext)
        XCTAssertNil(server.secureSession)
        XCTAssertEqual(String(decoding: serverEnd.received, as: UTF8.self), "member hello")
        XCTAssertEqual(String(decoding: client.received, as: UTF8.self), "room hello")
        pair.0.finish()
        scheduler.run()
        XCTAssertEqual(serverEnd.closed, [.closedByPeer])
    }

    func testPlaintextIsRefusedWithTheCallersBytesThenClosed() {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = negotiating(over: pair.1, allowsPlaintext: false)
        let serverEnd = Endpoint(server)
        let client = Endpoint(pair.0)
        server.send(Array("room hello that must not leak".utf8))
        pair.0.send(Array("member hello".utf8))
        scheduler.run()
        XCTAssertEqual(server.decision, .refused)
        XCTAssertEqual(client.received, refusal, "the refusal alone, nothing the room queued")
        XCTAssertEqual(serverEnd.received, [])
        assertFailed(serverEnd, saying: "this room requires TLS 1.3")
        XCTAssertFalse(server.send([1]))
        scheduler.advance(by: TLSStream.lingerAfterFailure)
        XCTAssertTrue(pair.1.isClosed)
        XCTAssertEqual(client.closed.count, 1)
    }

    func testGarbageAfterTheTLSByteFailsTheHandshakeCleanly() {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = negotiating(over: pair.1, allowsPlaintext: false)
        let serverEnd = Endpoint(server)
        let client = Endpoint(pair.0)
        pair.0.send([0x16] + patternBytes(count: 1000, seed: 9))
        scheduler.run()
        XCTAssertEqual(server.decision, .tls)
        XCTAssertNotNil(serverEnd.failureText)
        XCTAssertEqual(serverEnd.received, [])
        scheduler.advance(by: TLSStream.lingerAfterFailure)
        XCTAssertEqual(client.closed.count, 1)
    }

    func testTooMuchQueuedBeforeTheDecisionFailsAndCloses() {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = NegotiatingServerStream(over: pair.1, scheduler: scheduler, identity: serverIdentity,
                                             allowsPlaintext: true, refusal: refusal, outboxLimit: 100)
        let serverEnd = Endpoint(server)
        XCTAssertTrue(server.send([UInt8](repeating: 1, count: 100)))
        XCTAssertFalse(server.send([2]))
        assertFailed(serverEnd, saying: "more than 100 bytes are waiting")
        XCTAssertTrue(pair.1.isClosed)
    }

    /// The room's end handler calls back into the stream (a file relay asks to hear when it
    /// drained, and closes): this trapped on Swift's exclusive access while the handlers were
    /// being let go. Over TLS the call goes on into the TLSStream, in the middle of its own end.
    func testTheEndHandlerMayCallBackIntoTheStream() throws {
        for speaksTLS in [true, false] {
            let pair = InMemoryStream.pair(scheduler: scheduler)
            let server = negotiating(over: pair.1, allowsPlaintext: true)
            var closes: [Connection.CloseReason] = []
            var drained = 0
            server.start(onBytes: { _ in }, onClose: { [unowned server] reason in
                closes.append(reason)
                server.whenDrained { drained += 1 }
                server.close()
            })
            let client: any ByteStream = speaksTLS
                ? try TLSStream(over: pair.0, scheduler: scheduler, identity: clientIdentity, role: .client(acceptsServerKey: { _ in true }))
                : pair.0
            let clientEnd = Endpoint(client)
            client.send(Array("hello".utf8))
            scheduler.run()
            XCTAssertEqual(server.decision, speaksTLS ? .tls : .plaintext)
            client.finish()
            scheduler.run()
            XCTAssertEqual(closes, [.closedByPeer], "TLS: \(speaksTLS)")
            XCTAssertEqual(drained, 0, "a stream that ended tells nobody it drained")
            XCTAssertEqual(clientEnd.closed.count, 1, "TLS: \(speaksTLS)")
        }
    }

    func testAClientThatLeavesWithoutAWordIsReported() {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = negotiating(over: pair.1, allowsPlaintext: false)
        let serverEnd = Endpoint(server)
        let client = Endpoint(pair.0)
        pair.0.finish()
        scheduler.run()
        XCTAssertNil(server.decision)
        assertFailed(serverEnd, saying: "the client closed the connection before sending anything")
        XCTAssertEqual(client.closed, [.closedByPeer])
    }
}
