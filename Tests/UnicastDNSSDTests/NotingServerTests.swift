import UnicastDNSSD
import XCTest

/// `NotingServer`: the names an interrupted `svc-publish` withdraws are those whose update
/// may have been written: not a name whose update the server answered "prerequisite failed".
final class NotingServerTests: XCTestCase {
    let zone = try! DNSName(dotted: "lab.test.")
    let type = try! ServiceType("_p2pipp._tcp")

    func instance(_ name: String, host: String, port: UInt16) throws -> ServiceInstance {
        try ServiceInstance(instanceName: name, type: type, zone: zone, host: try DNSName(dotted: host + ".lab.test."),
                            port: port, txt: [Array("key=k".utf8)], addresses: [IPAddress("10.78.1.1")!])
    }

    /// Another machine holds "Room" byte for byte (same host name and port, as twins cloned
    /// from one image have): our update for it fails its prerequisite, we rename to
    /// "Room (2)". Only "Room (2)" is noted; "Room", another's, is not ours to withdraw.
    func testANameRefusedOnItsPrerequisiteIsNotNoted() async throws {
        let server = InMemoryDNSServer()
        _ = try await UnicastServiceDirectory(server: server).register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
        let log = NotingServer<InMemoryDNSServer>.Log()
        let registered = try await UnicastServiceDirectory(server: NotingServer(base: server, log: log))
            .register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .rename, isOurLeftover: { _ in false })
        XCTAssertEqual(registered.instanceName, "Room (2)")
        XCTAssertEqual(log.all, ["Room (2)"])
    }

    /// An update whose answer never came (the exchange failed or was cancelled) may have been
    /// applied: its name stays noted.
    func testAnUpdateWithoutAnAnswerStaysNoted() async throws {
        let log = NotingServer<FailingServer>.Log()
        do {
            _ = try await UnicastServiceDirectory(server: NotingServer(base: FailingServer(), log: log))
                .register(try instance("Room", host: "a", port: 4000), ttl: 30, conflict: .fail, isOurLeftover: { _ in false })
            XCTFail("the exchange failed")
        } catch let error as UnicastDNSSDError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertEqual(log.all, ["Room"])
    }

    /// A server whose every exchange is cut off, as by SIGINT.
    struct FailingServer: UnicastDNSServer {
        func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome { throw UnicastDNSSDError(.cancelled, "cancelled") }
        func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] { throw UnicastDNSSDError(.cancelled, "cancelled") }
        func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? { throw UnicastDNSSDError(.cancelled, "cancelled") }
    }
}
