import Foundation
import XCTest

/// The user's own Ctrl-C: reported as an interruption (not as the server closing), with what
/// was not delivered.
final class InterruptTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// A publisher on host a and `member` joined from host b, whose first line `line` the
    /// publisher has received.
    func roomWithOneMember(_ member: String, saying line: String) throws -> (publisher: ToolProcess, client: ToolProcess) {
        let name = TestLAN.uniqueName("interrupted")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", member, "--json"])
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "joined" }, client.transcript)
        client.send(line)
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == line }, publisher.transcript)
        return (publisher, client)
    }

    func testCtrlCSaysSoAndListsLinesTheServerNeverConfirmed() throws {
        let (publisher, client) = try roomWithOneMember("impatient", saying: "delivered")

        usleep(300_000) // the ACK for "delivered" crosses back (the publisher prints before it flushes)
        publisher.signal(SIGSTOP) // nothing is acknowledged from now on
        client.send("first unconfirmed")
        client.send("second unconfirmed")
        usleep(300_000)
        client.signal(SIGINT)
        XCTAssertEqual(client.waitForExit(timeout: 15), 130, client.transcript)
        let stderr = client.stderr.joined(separator: "\n")
        XCTAssertTrue(stderr.contains("not sent: first unconfirmed (sent, but the server never confirmed it)"), client.transcript)
        XCTAssertTrue(stderr.contains("not sent: second unconfirmed"), client.transcript)
        XCTAssertTrue(stderr.contains("error: interrupted; 2 items were not delivered"), client.transcript)
        XCTAssertFalse(stderr.contains("the server closed"), client.transcript)
        XCTAssertFalse(stderr.contains("not sent: delivered"), client.transcript)
        publisher.signal(SIGCONT)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }

    func testCtrlCAfterEverythingWasDeliveredSaysSo() throws {
        let (publisher, client) = try roomWithOneMember("calm", saying: "all of it")
        usleep(200_000) // the ACK crosses back
        client.signal(SIGINT)
        XCTAssertEqual(client.waitForExit(timeout: 15), 130, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("error: interrupted; everything sent was delivered") }, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "left" && $0["name"] as? String == "calm" }, publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }
}
