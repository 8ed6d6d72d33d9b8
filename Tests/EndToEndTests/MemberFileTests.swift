import Foundation
import XCTest

/// Files from one member to another through the room, and names with spaces in typed
/// commands, with the real tools on the virtual LAN.
final class MemberFileTests: FileTestCase {
    override var directoryPrefix: String { "svc-members" }

    /// Publishes `name` on host a; `--allow-plaintext` with `plaintext` (for the hostile
    /// plaintext tools: the frame layer they attack is the same inside TLS).
    func publish(_ name: String, plaintext: Bool = false) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"] + (plaintext ? ["--allow-plaintext"] : []))
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func join(_ name: String, as member: String, _ extra: [String] = []) throws -> ToolProcess {
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", member, "--json"] + extra)
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "joined" }, client.transcript)
        return client
    }


    func testMembersSendEachOtherFilesAndAddressTheRoomByItsQuotedName() throws {
        let (path, digest) = try randomFile(megabytes: 3)
        let bobInbox = directory + "/bob"
        let name = TestLAN.uniqueName("Living room")
        let publisher = try publish(name)
        let alice = try join(name, as: "alice")
        let bob = try join(name, as: "bob", ["--inbox", bobInbox])
        let carol = try join(name, as: "carol")

        alice.send("/send bob \(path)")
        let sending = try XCTUnwrap(alice.waitForEvent(timeout: 60) { $0["event"] as? String == "file-sending" }, alice.transcript)
        XCTAssertEqual(sending["to"] as? String, "bob", "a relayed file names the member it goes to, not the room")
        let sent = try XCTUnwrap(alice.waitForEvent(timeout: 60) { $0["event"] as? String == "file-sent" }, alice.transcript)
        XCTAssertEqual(sent["to"] as? String, "bob")
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertEqual(sent["bytes_transferred"] as? Int, 3 << 20)
        let stored = try XCTUnwrap(bob.waitForEvent { $0["event"] as? String == "file-stored" }, bob.transcript)
        XCTAssertEqual(stored["from"] as? String, "alice")
        XCTAssertEqual(inboxFiles(bobInbox), ["payload.bin"])
        XCTAssertEqual(try sha256(of: bobInbox + "/payload.bin"), digest)

        // The same content again: answered with the file already there, nothing stored twice.
        alice.send("/send bob \(path)")
        let again = try XCTUnwrap(alice.waitForEvent(timeout: 30) { $0["event"] as? String == "file-sent" && $0["bytes_transferred"] as? Int == 0 },
                                  alice.transcript)
        XCTAssertEqual(again["stored_as"] as? String, "payload.bin")
        XCTAssertEqual(inboxFiles(bobInbox), ["payload.bin"])

        // A member without an inbox is told how to accept files; the sender is refused clearly.
        alice.send("/send carol \(path)")
        XCTAssertNotNil(waitForStderr(alice) { $0.contains("the receiver does not accept files: it was started without --inbox") }, alice.transcript)
        let told = try XCTUnwrap(carol.waitForEvent { $0["event"] as? String == "file-failed" }, carol.transcript)
        XCTAssertEqual(told["from"] as? String, "alice")
        XCTAssertTrue((told["reason"] as? String ?? "").contains("--inbox DIR"), "\(told)")

        // So is the publisher, addressed by its quoted name.
        alice.send("/send \"\(name)\" \(path)")
        let publisherTold = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "file-failed" }, publisher.transcript)
        XCTAssertEqual(publisherTold["from"] as? String, "alice")
        XCTAssertTrue((publisherTold["reason"] as? String ?? "").contains("--inbox DIR"), "\(publisherTold)")

        alice.send("/send nobody \(path)")
        XCTAssertNotNil(waitForStderr(alice) { $0.contains("nobody called 'nobody' is in the room") }, alice.transcript)

        // The publisher's name has a space: quoted, it is addressed like any member's.
        alice.send("/msg \"\(name)\" hello room")
        let text = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "hello room" }, publisher.transcript)
        XCTAssertEqual(text["to"] as? String, name)
        alice.send("/msg \"\(name)")
        XCTAssertNotNil(waitForStderr(alice) { $0.contains("is not closed") }, alice.transcript)
        publisher.send("/msg \"\(name)\" hello me")
        XCTAssertNotNil(waitForStderr(publisher) { $0.contains("is this room's own name") }, publisher.transcript)

        for member in [alice, bob, carol] { member.closeStdin() }
        XCTAssertEqual(alice.waitForExit(), 74, "three files were not delivered: " + alice.transcript)
        XCTAssertEqual(bob.waitForExit(), 0, bob.transcript)
        XCTAssertEqual(carol.waitForExit(), 0, carol.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testARecipientThatStopsReadingDoesNotMuteTheSender() throws {
        let (path, _) = try randomFile(megabytes: 32)
        let name = TestLAN.uniqueName("sink")
        let publisher = try publish(name, plaintext: true)
        let port = try XCTUnwrap(publisher.jsonEvents.first { $0["event"] as? String == "registered" }?["port"] as? Int)
        let sink = try TestLAN.command(on: "b", ["/usr/bin/python3", TestLAN.script("hostile-peer"), TestLAN.addresses(of: "a").ipv4, String(port),
                                                 "relay-sink", "100"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "sink" }, publisher.transcript)
        let carol = try join(name, as: "carol")
        let alice = try join(name, as: "alice")
        alice.send("/send sink \(path)")
        XCTAssertNotNil(sink.waitForLine(timeout: 30) { $0.hasPrefix("{\"accepted\": ") && !$0.contains("null") }, sink.transcript)
        // Longer than the minute after which a sender whose connection was not read dropped
        // (heartbeat-timeout): alice talks all along, and every line arrives.
        for index in 1...16 {
            alice.send("line \(index)")
            sleep(5)
        }
        XCTAssertNotNil(carol.waitForEvent(timeout: 20) { $0["event"] as? String == "text" && $0["text"] as? String == "line 16" }, carol.transcript)
        let heard = carol.jsonEvents.filter { $0["event"] as? String == "text" && $0["from"] as? String == "alice" }.compactMap { $0["text"] as? String }
        XCTAssertEqual(heard, (1...16).map { "line \($0)" })
        XCTAssertFalse(alice.jsonEvents.contains { $0["event"] as? String == "disconnected" }, alice.transcript)
        for member in [alice, carol] { member.closeStdin() }
        _ = alice.waitForExit()
        XCTAssertEqual(carol.waitForExit(), 0, carol.transcript)
        sink.signal(SIGTERM)
        _ = sink.waitForExit()
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testAFileBetweenMembersResumesAfterTheSenderBreaksOff() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let tag = try resumeTag(of: path) // svc-connect streams: its partial data is named by the tag
        let bobInbox = directory + "/bob"
        let name = TestLAN.uniqueName("relay")
        // Host b sends at 200 Mbit/s, so 200 MB take about 8 s: long enough to break off.
        let shape = try TestLAN.command(on: "b", ["tc", "qdisc", "add", "dev", "veth0", "root", "tbf", "rate", "200mbit", "burst", "256kb", "latency", "100ms"])
        XCTAssertEqual(shape.waitForExit(), 0, shape.transcript)
        var shaped = true
        func liftShaping() {
            guard shaped else { return }
            shaped = false
            _ = try? TestLAN.command(on: "b", ["tc", "qdisc", "del", "dev", "veth0", "root"]).waitForExit()
        }
        defer { liftShaping() }

        let publisher = try publish(name)
        let bob = try join(name, as: "bob", ["--inbox", bobInbox])
        let alice = try join(name, as: "alice")
        alice.send("/send bob \(path)")
        let deadline = Date().addingTimeInterval(60)
        while partialSize(bobInbox, named: tag) < 60 << 20 && Date() < deadline { usleep(20_000) }
        alice.signal(SIGKILL)
        _ = alice.waitForExit()
        let broken = try XCTUnwrap(bob.waitForEvent(timeout: 20) { $0["event"] as? String == "file-failed" }, bob.transcript)
        XCTAssertTrue((broken["reason"] as? String ?? "").contains("alice left the room"), "\(broken)")
        let kept = partialSize(bobInbox, named: tag)
        XCTAssertGreaterThanOrEqual(kept, 60 << 20)
        XCTAssertLessThan(kept, 200 << 20)
        XCTAssertEqual(inboxFiles(bobInbox), [], "nothing that looks complete")

        liftShaping()
        let back = try join(name, as: "alice")
        back.send("/send bob \(path)")
        let sent = try XCTUnwrap(back.waitForEvent(timeout: 120) { $0["event"] as? String == "file-sent" }, back.transcript)
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertLessThanOrEqual(try XCTUnwrap(sent["bytes_transferred"] as? Int), (200 << 20) - kept, "only what bob lacked crossed")
        XCTAssertEqual(inboxFiles(bobInbox), ["payload.bin"])
        XCTAssertEqual(try sha256(of: bobInbox + "/payload.bin"), digest)
        for member in [back, bob] { member.closeStdin() }
        XCTAssertEqual(back.waitForExit(), 0, back.transcript)
        XCTAssertEqual(bob.waitForExit(), 0, bob.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
