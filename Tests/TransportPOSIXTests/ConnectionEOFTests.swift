import Dispatch
import TransportCore
import TransportPOSIX
import XCTest

/// The end of a connection is seen even when it comes in one piece with the peer's last bytes.
final class ConnectionEOFTests: XCTestCase {
    final class Box: @unchecked Sendable {
        var connections: [Connection] = []
        var serverReceived = 0
        var serverClose: Connection.CloseReason?
    }

    /// The client sends 2 MiB; the server answers with 2 MiB and finishes; the client answers
    /// that with a few bytes and finishes at once, so its last bytes and its FIN reach the
    /// server together. The server used to miss that EOF and wait for ever.
    func testAFinishedConnectionSeesThePeersEOFThatCameWithItsLastBytes() async throws {
        let loop = try EventLoop(name: "test.connection-eof")
        defer { loop.shutdown() }
        let box = Box()
        let closed = expectation(description: "both ends closed")
        closed.expectedFulfillmentCount = 2
        let listener = try TCPListener(port: 0)
        defer { listener.cancel() }
        let sent = [UInt8](repeating: 1, count: 2 << 20)
        listener.start(on: loop) { socket, peer in
            let connection = Connection(socket: socket, peer: peer, loop: loop)
            box.connections.append(connection)
            connection.start(onBytes: { bytes in
                box.serverReceived += bytes.count
                guard box.serverReceived == sent.count else { return }
                connection.send(sent)
                connection.finish()
            }, onClose: { reason in
                box.serverClose = reason
                closed.fulfill()
            })
        }
        let (socket, endpoint) = try await TCPConnector.connect(to: [SocketEndpoint(address: IPAddress(bytes: [127, 0, 0, 1])!, port: listener.port)], on: loop)
        loop.execute {
            let connection = Connection(socket: socket, peer: endpoint, loop: loop)
            box.connections.append(connection)
            var received = 0
            connection.send(sent)
            connection.start(onBytes: { bytes in
                received += bytes.count
                guard received == sent.count else { return }
                connection.send([UInt8](repeating: 2, count: 24))
                connection.finish()
            }, onClose: { _ in closed.fulfill() })
        }
        await fulfillment(of: [closed], timeout: 10)
        loop.runAndWait {
            XCTAssertEqual(box.serverReceived, sent.count + 24)
            XCTAssertEqual(box.serverClose, .closedByPeer)
        }
    }
}
