import Foundation
import XCTest

/// A room outlives its host's orderly restart; leaving is obvious.
final class RoomRestartTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func publish(_ name: String) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func joinedCount(_ member: ToolProcess) -> Int {
        member.jsonEvents.filter { $0["event"] as? String == "joined" }.count
    }


    func testAMemberIsBackByItselfWhenThePublisherRestartsWithTheSameName() throws {
        let name = TestLAN.uniqueName("restarted")
        let first = try publish(name)
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "loyal", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" }, member.transcript)

        first.signal(SIGINT)
        XCTAssertEqual(first.waitForExit(), 0, first.transcript)
        let told = waitForStderr(member) { $0.contains("the room closed") }
        XCTAssertEqual(told, "svc-connect: the room closed: the server said goodbye: the server is shutting down; waiting for it to come back \u{2014} Ctrl-C to leave",
                       member.transcript)
        member.send("typed while the room was closed")
        usleep(3_000_000) // a few looks find nobody; the member stays
        XCTAssertTrue(member.process.isRunning, member.transcript)

        let second = try publish(name)
        let restarted = Date()
        let deadline = Date().addingTimeInterval(15)
        while joinedCount(member) < 2 && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(joinedCount(member), 2, "back in the room: " + member.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(restarted), 8, "back promptly, not after a long backoff")
        XCTAssertNotNil(second.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "typed while the room was closed" },
                        second.transcript)
        member.send("hello again")
        XCTAssertNotNil(second.waitForEvent { $0["text"] as? String == "hello again" && $0["from"] as? String == "loyal" }, second.transcript)
        second.send("welcome back")
        XCTAssertNotNil(member.waitForEvent { $0["text"] as? String == "welcome back" }, member.transcript)

        member.send("/quit")
        member.send("after quit")
        XCTAssertEqual(member.waitForExit(), 0, member.transcript)
        XCTAssertFalse(second.jsonEvents.contains { $0["text"] as? String == "after quit" }, "lines after /quit are not sent")
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }

    func testWithNoReconnectARoomClosedByQuitEnds74() throws {
        let name = TestLAN.uniqueName("no return")
        let publisher = try publish(name)
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "brief", "--no-reconnect", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" }, member.transcript)
        publisher.send("/help")
        XCTAssertNotNil(waitForStderr(publisher) { $0.contains("to close the room: /quit or Ctrl-C") }, publisher.transcript)
        publisher.send("/quit") // the publisher's /quit closes the room as SIGINT does
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
        XCTAssertEqual(member.waitForExit(), 74, member.transcript)
        XCTAssertTrue(member.stderr.contains { $0.contains("error: the room closed") }, member.transcript)
    }
}
