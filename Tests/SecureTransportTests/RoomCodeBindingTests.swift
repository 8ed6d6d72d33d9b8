import MessagingTesting
import RoomCodeExchange
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// What the room-code exchange is bound to: keying material exported from the TLS session
/// (equal at both ends, new for every session) and both ends' keys.
final class RoomCodeBindingTests: XCTestCase {
    let scheduler = ManualScheduler()

    /// A TLS session between the test identities, over an in-memory pair.
    func session() throws -> (client: SecureSession, server: SecureSession) {
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = try TLSStream(over: pair.1, scheduler: scheduler, identity: TLSStreamTests.serverIdentity, role: .server)
        let client = try TLSStream(over: pair.0, scheduler: scheduler, identity: TLSStreamTests.clientIdentity,
                                   role: .client(acceptsServerKey: { _ in true }))
        server.start(onBytes: { _ in }, onClose: { _ in })
        client.start(onBytes: { _ in }, onClose: { _ in })
        client.send(Array("x".utf8))
        scheduler.run()
        let sessions = (client.secureSession, server.secureSession)
        client.close()
        server.close()
        scheduler.run()
        return (try XCTUnwrap(sessions.0, "the handshake completed"), try XCTUnwrap(sessions.1, "the handshake completed"))
    }

    func testBothEndsExportTheSameSessionIDAndKnowBothKeys() throws {
        XCTAssertEqual(TLSStream.roomCodeLabel, CPace.exporterLabel)
        XCTAssertEqual(TLSStream.roomCodeSessionIDLength, CPace.exporterLength)
        let (client, server) = try session()
        XCTAssertEqual(client.roomCodeSessionID.count, 32)
        XCTAssertEqual(client.roomCodeSessionID, server.roomCodeSessionID)
        XCTAssertEqual(client.localKey, TLSStreamTests.clientIdentity.fingerprint)
        XCTAssertEqual(server.localKey, TLSStreamTests.serverIdentity.fingerprint)
        XCTAssertEqual(client.localKey, server.peerKey)
        XCTAssertEqual(server.localKey, client.peerKey)
        let (again, _) = try session()
        XCTAssertNotEqual(again.roomCodeSessionID, client.roomCodeSessionID, "every session is a fresh guess")
    }
}
