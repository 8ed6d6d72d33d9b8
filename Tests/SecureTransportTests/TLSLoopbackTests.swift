import Dispatch
import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// TLS over real TCP connections on the loopback interface: what the room server and client
/// will run (a listener's connection behind the first-byte decision, a client's connection).
final class TLSLoopbackTests: XCTestCase {
    final class Box: @unchecked Sendable {
        var received: [UInt8] = []
        var serverSession: SecureSession?
        var clientSession: SecureSession?
        var serverClose: Connection.CloseReason?
        var clientClose: Connection.CloseReason?
        var streams: [AnyObject] = []
    }

    func testMebibytesEachWayOverTCPWithTheServersFirstByteDecision() async throws {
        let loop = try EventLoop(name: "test.tls-loopback")
        defer { loop.shutdown() }
        let scheduler = loop
        let serverIdentity = try Identity.ephemeral()
        let clientIdentity = try Identity.ephemeral()
        let toServer = patternBytes(count: 6 << 20, seed: 5)
        let reply = patternBytes(count: 2 << 20, seed: 6)
        let box = Box()
        let done = expectation(description: "both ends closed")
        done.expectedFulfillmentCount = 2
        let listener = try TCPListener(port: 0)
        defer { listener.cancel() }
        listener.start(on: loop) { socket, peer in
            let server = NegotiatingServerStream(over: Connection(socket: socket, peer: peer, loop: loop), scheduler: scheduler,
                                                 identity: serverIdentity, allowsPlaintext: false, refusal: [0])
            let producer = Producer(server, reply, finishes: true)
            box.streams += [server, producer]
            server.start(onBytes: { bytes in
                box.received += bytes
                if box.received.count == toServer.count {
                    box.serverSession = server.secureSession
                    producer.pump()
                }
            }, onClose: { reason in
                box.serverClose = reason
                done.fulfill()
            })
        }
        let (socket, endpoint) = try await TCPConnector.connect(to: [SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)], on: loop)
        loop.execute {
            let client = try! TLSStream(over: Connection(socket: socket, peer: endpoint, loop: loop), scheduler: scheduler,
                                        identity: clientIdentity, role: .client(acceptsServerKey: { $0 == serverIdentity.fingerprint }))
            var echoed: [UInt8] = []
            let producer = Producer(client, toServer)
            box.streams += [client, producer]
            client.start(onBytes: { echoed += $0 }, onClose: { reason in
                box.clientClose = reason
                box.clientSession = client.secureSession
                XCTAssertTrue(echoed == reply, "\(echoed.count) of \(reply.count) bytes")
                done.fulfill()
            })
            producer.pump()
        }
        await fulfillment(of: [done], timeout: 30)
        loop.runAndWait {
            XCTAssertTrue(box.received == toServer, "\(box.received.count) of \(toServer.count) bytes")
            XCTAssertEqual(box.serverClose, .closedByPeer)
            XCTAssertEqual(box.clientClose, .closedByPeer)
            XCTAssertEqual(box.serverSession?.peerKey, clientIdentity.fingerprint)
            XCTAssertEqual(box.clientSession?.peerKey, serverIdentity.fingerprint)
            XCTAssertEqual(box.serverSession?.safetyCode, box.clientSession?.safetyCode)
        }
    }
}
