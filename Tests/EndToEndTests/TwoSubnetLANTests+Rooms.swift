import Foundation
import XCTest

/// Everything a room does on one link, across the router (issue 15, item 3): the publisher on
/// a (subnet 1) registers in the zone, members on b (subnet 2) find it there with `--domain`.
extension TwoSubnetLANTests {
    /// A directory of the test's own, removed when the test ends.
    private func scratchDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "svc-subnets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// svc-publish on a in the LAN's zone (`extra` appended); returns it once registered, and its key.
    private func publishAcross(_ name: String, _ extra: [String] = []) throws -> (ToolProcess, key: String) {
        let settings = try TestLAN.settings(of: "a", lan: TestLAN.wide)
        let publisher = try TestLAN.run("svc-publish", on: "a", lan: TestLAN.wide, ["--name", name, "--domain", "lab.test.", "--dns-server", settings["DNS_SERVER"]!,
                                                                                   "--tsig-key", settings["TSIG_KEY"]!, "--json"] + extra)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return (publisher, try XCTUnwrap(registered["key"] as? String, publisher.transcript))
    }

    /// svc-connect on b in the zone, as a member with the XDG_CONFIG_HOME `config` (its key and pins).
    private func connectAcross(_ name: String, config: String, _ extra: [String]) throws -> ToolProcess {
        try TestLAN.command(on: "b", lan: TestLAN.wide, ["/usr/bin/env", "XDG_CONFIG_HOME=\(config)", TestLAN.tool("svc-connect"),
                                                         "--domain", "lab.test.", name] + extra)
    }

    private func stop(_ publisher: ToolProcess) {
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 10), 0, publisher.transcript)
    }

    private func sha256(of path: String) throws -> String {
        let sum = try ToolProcess("/usr/bin/sha256sum", [path])
        XCTAssertEqual(sum.waitForExit(timeout: 60), 0, sum.transcript)
        return String(try XCTUnwrap(sum.stdout.first?.split(separator: " ").first))
    }

    func testAFileSentFromTheOtherSubnetArrivesVerified() throws {
        let directory = try scratchDirectory()
        let path = directory + "/across.bin"
        let dd = try ToolProcess("/bin/dd", ["if=/dev/urandom", "of=\(path)", "bs=1M", "count=8", "status=none"])
        XCTAssertEqual(dd.waitForExit(timeout: 60), 0, dd.transcript)
        let digest = try sha256(of: path)
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("files across")
        let (publisher, _) = try publishAcross(name, ["--inbox", inbox])

        let sender = try connectAcross(name, config: directory, ["--send", path, "--json"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, sender.transcript)
        let sent = try XCTUnwrap(sender.jsonEvents.first { $0["event"] as? String == "file-sent" }, sender.transcript)
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertEqual(sent["size"] as? Int, 8 << 20)
        let stored = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "file-stored" }, publisher.transcript)
        XCTAssertEqual(stored["sha256"] as? String, digest)
        XCTAssertEqual(try sha256(of: inbox + "/across.bin"), digest)
        stop(publisher)
    }

    /// a's cable pulled for 12 s: the member on b notices by heartbeat, keeps what is typed,
    /// finds the room in the zone again and delivers every line exactly once.
    func testALinkCutOnThePublishersSideIsHealedAndNothingIsLost() throws {
        let directory = try scratchDirectory()
        let name = TestLAN.uniqueName("cut across")
        let (publisher, _) = try publishAcross(name, ["--heartbeat", "1"])
        let member = try connectAcross(name, config: directory, ["--as", "far", "--heartbeat", "1", "--timeout", "3", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "far" }, member.transcript)
        member.send("before the cut")
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "before the cut" }, publisher.transcript)

        XCTAssertEqual(try TestLAN.control(["link", "down", "a"], lan: TestLAN.wide), 0)
        var linkDown = true
        defer { if linkDown { _ = try? TestLAN.control(["link", "up", "a"], lan: TestLAN.wide) } }
        let typed = (1...3).map { "typed across the cut \($0)" }
        member.send(typed[0])
        XCTAssertNotNil(member.waitForEvent(timeout: 15) { $0["event"] as? String == "disconnected" }, "noticed by heartbeat: " + member.transcript)
        typed.dropFirst().forEach(member.send)
        Thread.sleep(forTimeInterval: 8)
        XCTAssertEqual(try TestLAN.control(["link", "up", "a"], lan: TestLAN.wide), 0)
        linkDown = false

        for line in typed {
            XCTAssertNotNil(publisher.waitForEvent(timeout: 60) { $0["event"] as? String == "text" && $0["text"] as? String == line },
                            line + "\n" + publisher.transcript + member.transcript)
        }
        XCTAssertEqual(publisher.jsonEvents.filter { typed.contains($0["text"] as? String ?? "") }.count, typed.count, "each exactly once")
        // The member prints `joined` once WELCOME is in, which may be after the room printed
        // the lines it sent again (two processes, two pipes): wait for it.
        XCTAssertTrue(eventually(within: 10) { member.jsonEvents.filter { $0["event"] as? String == "joined" && $0["name"] as? String == "far" }.count >= 2 },
                      "joined again after the cut: " + member.transcript)
        publisher.send("after the cut")
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "after the cut" }, member.transcript)
        member.closeStdin()
        XCTAssertEqual(member.waitForExit(timeout: 15), 0, member.transcript)
        stop(publisher)
    }

    func testARoomWithARoomCodeIsJoinedFromTheOtherSubnet() throws {
        let directory = try scratchDirectory()
        let name = TestLAN.uniqueName("coded across")
        let (publisher, _) = try publishAcross(name, ["--identity", directory + "/room.pem", "--room-code"])
        let event = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "room_code" }, publisher.transcript)
        let code = try XCTUnwrap(event["code"] as? String, publisher.transcript)
        for who in ["wrong", "member"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + who, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }

        // A well-formed code (its last digit checks the others) that is not the room's.
        let guess = code == "1111-1111-1117" ? "1234-5678-9018" : "1111-1111-1117"
        let wrong = try connectAcross(name, config: directory + "/wrong", ["--as", "guesser", "--room-code", guess, "--message", "must not arrive",
                                                                          "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(wrong.waitForExit(timeout: 30), 79, wrong.transcript)
        let member = try connectAcross(name, config: directory + "/member", ["--as", "coder", "--room-code", code, "--message", "joined with the code",
                                                                            "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(member.waitForExit(timeout: 30), 0, member.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "joined with the code" }, publisher.transcript)
        XCTAssertFalse(publisher.stdout.contains { $0.contains("must not arrive") }, publisher.transcript)
        stop(publisher)
    }

    /// The TXT in the zone carries the key as on mDNS: the first contact pins it, and another
    /// key behind the same name is refused before anything is sent.
    func testFirstContactPinsTheKeyFromTheZoneAndAChangedKeyIsRefused() throws {
        let directory = try scratchDirectory()
        let name = TestLAN.uniqueName("pinned across")
        let (first, firstKey) = try publishAcross(name, ["--identity", directory + "/old.pem"])
        let contact = try connectAcross(name, config: directory, ["--as", "pinner", "--message", "first contact", "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(contact.waitForExit(timeout: 30), 0, contact.transcript)
        XCTAssertTrue(contact.stderr.contains { $0.contains("first contact with '\(name)': pinned its key \(firstKey)") }, contact.transcript)
        let pins = { (try? String(contentsOfFile: directory + "/svc/known_peers", encoding: .utf8))?.split(separator: "\n").filter { !$0.hasPrefix("#") } ?? [] }
        XCTAssertEqual(pins().count, 1)
        XCTAssertTrue(pins().first?.hasSuffix(" \(firstKey)") == true, "\(pins())")
        stop(first)

        let (second, secondKey) = try publishAcross(name, ["--identity", directory + "/new.pem"])
        XCTAssertNotEqual(secondKey, firstKey)
        let refused = try connectAcross(name, config: directory, ["--as", "pinner", "--message", "must not arrive", "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(refused.waitForExit(timeout: 30), 77, refused.transcript)
        XCTAssertTrue(refused.stderr.contains { $0.contains("@@@ WARNING: THE KEY OF '\(name)' HAS CHANGED @@@") }, refused.transcript)
        XCTAssertTrue(refused.stderr.contains { $0.contains("presented key:") && $0.contains(secondKey) }, refused.transcript)
        XCTAssertFalse(second.jsonEvents.contains { $0["event"] as? String == "joined" || $0["event"] as? String == "text" }, "nothing was sent: " + second.transcript)
        XCTAssertTrue(pins().first?.hasSuffix(" \(firstKey)") == true, "the pin is left as it was: \(pins())")
        stop(second)
    }
}
