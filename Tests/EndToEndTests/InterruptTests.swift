import Foundation
import XCTest

/// The user's own Ctrl-C: reported as an interruption (not as the server closing), with what
/// was not delivered.
final class InterruptTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func testCtrlCSaysSoAndListsLinesTheServerNeverConfirmed() throws {
        let name = TestLAN.uniqueName("interrupted")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", "impatient", "--json"])
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "joined" }, client.transcript)
        client.send("delivered")
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == "delivered" }, publisher.transcript)

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
        let name = TestLAN.uniqueName("interrupted")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", "calm", "--json"])
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "joined" }, client.transcript)
        client.send("all of it")
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == "all of it" }, publisher.transcript)
        usleep(200_000) // the ACK crosses back
        client.signal(SIGINT)
        XCTAssertEqual(client.waitForExit(timeout: 15), 130, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("error: interrupted; everything sent was delivered") }, client.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "left" && $0["name"] as? String == "calm" }, publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }
}
