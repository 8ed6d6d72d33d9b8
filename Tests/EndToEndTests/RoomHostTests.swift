import Foundation
import XCTest

/// A member's room answers from another host after a reconnect: it may be someone else's room
/// of the same name, so the member is told, and nothing queued for the old room goes there.
/// Only without TLS (`--allow-plaintext` on both sides), where a host is all there is to go by:
/// over TLS the room's pinned key decides instead (SecureConnectTests).
final class RoomHostTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func publish(_ name: String, on host: String) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: host, ["--name", name, "--allow-plaintext", "--json"])
        XCTAssertNotNil(publisher.waitForEvent(timeout: 20) { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func testASamenamedPublisherOnAnotherHostGetsAWarningAndNoneOfTheQueuedLines() throws {
        let name = TestLAN.uniqueName("pinned")
        let real = try publish(name, on: "a")
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "carl", "--allow-plaintext", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" }, member.transcript)

        real.signal(SIGKILL)
        _ = real.waitForExit()
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "disconnected" }, member.transcript)
        member.send("/msg olga the wifi password is hunter2")
        member.send("typed while away")

        // Someone else publishes the same name, on the member's own host (the LAN has two).
        let fake = try publish(name, on: "b")
        let changed = member.waitForEvent(timeout: 40) { $0["event"] as? String == "host-changed" }
        XCTAssertNotNil(changed, member.transcript)
        // The addresses named are those of the first join (host a) and of the new one (host b).
        let hosts = member.jsonEvents.filter { $0["event"] as? String == "connected" }.map { $0["addresses"] as? [String] ?? [] }
        XCTAssertEqual(hosts.count, 2, member.transcript)
        XCTAssertTrue(hosts.first?.contains(changed?["previous"] as? String ?? "") == true, member.transcript)
        XCTAssertTrue(hosts.last?.contains(changed?["address"] as? String ?? "") == true, member.transcript)
        XCTAssertTrue(Set(hosts.first ?? []).isDisjoint(with: hosts.last ?? []), member.transcript)
        let deadline = Date().addingTimeInterval(10)
        func warned() -> Bool { member.stderr.contains { $0.contains("now answers from another host") && $0.contains("it may be someone else") } }
        while (member.jsonEvents.filter({ $0["event"] as? String == "joined" }).count < 2 || !warned()) && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(warned(), "the warning on standard error too: " + member.transcript)
        let notSent = member.jsonEvents.filter { $0["event"] as? String == "not-sent" }.compactMap { $0["what"] as? String }
        XCTAssertTrue(notSent.contains { $0.hasPrefix("/msg olga the wifi password is hunter2 (it was for the room on ") }, member.transcript)
        XCTAssertTrue(notSent.contains { $0.hasPrefix("typed while away (") }, member.transcript)

        member.send("after the warning")
        XCTAssertNotNil(fake.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "after the warning" }, fake.transcript)
        XCTAssertFalse(fake.jsonEvents.contains { ($0["text"] as? String ?? "").contains("hunter2") || $0["text"] as? String == "typed while away" },
                       fake.transcript)
        member.closeStdin()
        XCTAssertEqual(member.waitForExit(timeout: 20), 74, member.transcript)
        XCTAssertTrue(member.stderr.contains { $0.contains("2 items were not delivered") }, member.transcript)
        fake.signal(SIGTERM)
        _ = fake.waitForExit()
    }
}
