import Foundation
import XCTest

/// Rooms, heartbeats, reconnects and hostile peers on the virtual LAN, with the real tools.
final class RoomTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func publish(_ name: String, _ extra: [String] = []) throws -> (ToolProcess, port: Int) {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"] + extra)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return (publisher, try XCTUnwrap(registered["port"] as? Int))
    }

    func join(_ name: String, as member: String, _ extra: [String] = []) throws -> ToolProcess {
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", member, "--json"] + extra)
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "joined" }, client.transcript)
        return client
    }

    func texts(_ client: ToolProcess, _ text: String) -> Int {
        client.jsonEvents.filter { $0["event"] as? String == "text" && $0["text"] as? String == text }.count
    }

    func testThreeMembersTextPrivateMessagesWhoAndLeave() throws {
        let name = TestLAN.uniqueName("chat")
        let (publisher, _) = try publish(name)
        let ann = try join(name, as: "ann")
        let bob = try join(name, as: "bob")
        let cid = try join(name, as: "cid")
        XCTAssertNotNil(ann.waitForEvent { $0["event"] as? String == "presence" && ($0["names"] as? [String])?.contains("cid") == true && $0["kind"] as? String == "joined" })

        ann.send("hello everyone")
        for other in [bob, cid] {
            XCTAssertNotNil(other.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == "ann" && $0["text"] as? String == "hello everyone" },
                            other.transcript)
        }
        bob.send("/msg cid just for you")
        let secret = try XCTUnwrap(cid.waitForEvent { $0["text"] as? String == "just for you" }, cid.transcript)
        XCTAssertEqual(secret["from"] as? String, "bob")
        XCTAssertEqual(secret["to"] as? String, "cid")
        cid.send("/who")
        let who = try XCTUnwrap(cid.waitForEvent { $0["event"] as? String == "presence" && $0["kind"] as? String == "list" && ($0["names"] as? [String])?.count == 4 },
                                cid.transcript)
        XCTAssertEqual(who["names"] as? [String], [name, "ann", "bob", "cid"])

        // Exactly once, and the private message reached no one else.
        ann.send("/who")
        XCTAssertNotNil(ann.waitForEvent { $0["event"] as? String == "presence" && $0["kind"] as? String == "list" && ($0["names"] as? [String])?.count == 4 })
        XCTAssertEqual(texts(bob, "hello everyone"), 1)
        XCTAssertEqual(texts(cid, "hello everyone"), 1)
        XCTAssertEqual(texts(ann, "hello everyone"), 0, "the sender does not get its own text back")
        XCTAssertEqual(texts(ann, "just for you"), 0)

        cid.signal(SIGKILL)
        for member in [ann, bob] {
            XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "presence" && $0["kind"] as? String == "left" && $0["names"] as? [String] == ["cid"] },
                            member.transcript)
        }
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "left" && $0["name"] as? String == "cid" })
        for process in [ann, bob, publisher] { process.signal(SIGTERM) }
        for process in [ann, bob, publisher] { XCTAssertEqual(process.waitForExit(), 0, process.transcript) }
    }

    func testClientReconnectsToARestartedPublisherAndDeliversWhatWasTyped() throws {
        let name = TestLAN.uniqueName("phoenix")
        let (first, firstPort) = try publish(name)
        let client = try join(name, as: "faithful")
        first.signal(SIGKILL)
        XCTAssertNotNil(waitForStderr(client) { $0.contains("connection lost") }, client.transcript)
        client.send("typed during the outage")
        let (second, secondPort) = try publish(name)
        XCTAssertNotEqual(firstPort, secondPort, "a restarted publisher gets a new ephemeral port")
        let delivered = second.waitForEvent(timeout: 30) { $0["event"] as? String == "text" && $0["text"] as? String == "typed during the outage" }
        XCTAssertNotNil(delivered, second.transcript + client.transcript)
        XCTAssertEqual(delivered?["from"] as? String, "faithful")
        client.closeStdin()
        XCTAssertEqual(client.waitForExit(), 0, client.transcript)
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }

    func testAReconnectRefusedAsFullKeepsTryingInOneLoop() throws {
        let name = TestLAN.uniqueName("crowded")
        let (first, _) = try publish(name, ["--max-clients", "1"])
        let patient = try join(name, as: "patient")
        first.signal(SIGKILL)
        XCTAssertNotNil(waitForStderr(patient) { $0.contains("connection lost") }, patient.transcript)
        // Held still until the squatter is in: otherwise its own reconnect may win the one place.
        patient.signal(SIGSTOP)
        let (second, _) = try publish(name, ["--max-clients", "1"])
        let squatter = try join(name, as: "squatter")
        patient.signal(SIGCONT)
        XCTAssertNotNil(waitForStderr(patient, timeout: 15) { $0.contains("server-full") }, "refused while the room is full: " + patient.transcript)
        squatter.closeStdin()
        XCTAssertEqual(squatter.waitForExit(), 0, squatter.transcript)
        patient.send("finally in")
        XCTAssertNotNil(second.waitForEvent(timeout: 30) { $0["event"] as? String == "text" && $0["text"] as? String == "finally in" },
                        second.transcript + patient.transcript)
        let attempts = patient.stderr.filter { $0.contains("reconnecting in") }
        XCTAssertEqual(attempts.count, Set(attempts.map { $0.components(separatedBy: ", attempt ").last ?? "" }).count,
                       "each attempt number once: a single reconnect loop\n" + patient.transcript)
        patient.closeStdin()
        XCTAssertEqual(patient.waitForExit(), 0, patient.transcript)
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }

    func testALinkDownFor20SecondsIsNoticedAndHealedWithLinesTypedMeanwhile() throws {
        let name = TestLAN.uniqueName("outage")
        let (publisher, _) = try publish(name, ["--heartbeat", "1"])
        let client = try join(name, as: "steady", ["--heartbeat", "1", "--timeout", "2"])
        XCTAssertEqual(try TestLAN.control(["link", "down", "a"]), 0)
        var linkDown = true
        defer { if linkDown { _ = try? TestLAN.control(["link", "up", "a"]) } }
        // Typed before the loss is noticed: these go into a connection that is already dead,
        // and only the server's acknowledgements tell the client to send them again.
        let typedUnnoticed = (1...2).map { "typed before the loss was noticed \($0)" }
        typedUnnoticed.forEach(client.send)
        XCTAssertNotNil(waitForStderr(client, timeout: 15) { $0.contains("connection lost") }, "noticed by heartbeat: " + client.transcript)
        let typed = typedUnnoticed + (1...3).map { "typed during the outage \($0)" }
        typed.dropFirst(typedUnnoticed.count).forEach(client.send)
        Thread.sleep(forTimeInterval: 16)
        XCTAssertEqual(try TestLAN.control(["link", "up", "a"]), 0)
        linkDown = false
        for line in typed {
            XCTAssertNotNil(publisher.waitForEvent(timeout: 60) { $0["event"] as? String == "text" && $0["text"] as? String == line },
                            line + "\n" + publisher.transcript + client.transcript)
        }
        XCTAssertEqual(publisher.jsonEvents.filter { typed.contains($0["text"] as? String ?? "") }.count, typed.count, "each exactly once")
        client.closeStdin()
        XCTAssertEqual(client.waitForExit(timeout: 10), 0, client.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testAHostThatVanishedFailsFastAndClearly() throws {
        let name = TestLAN.uniqueName("vanished")
        let (publisher, _) = try publish(name)
        XCTAssertNotNil(try TestLAN.run("svc-browse", on: "b", ["--json"]).waitForEvent { $0["name"] as? String == name })
        XCTAssertEqual(try TestLAN.control(["link", "down", "a"]), 0)
        defer { _ = try? TestLAN.control(["link", "up", "a"]) }
        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "2"])
        XCTAssertEqual(client.waitForExit(timeout: 15), 75, client.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "bounded by --timeout, not a TCP timeout")
        XCTAssertTrue(client.stderr.contains { $0.contains("\"\(name)\" is published, but its host does not answer") }, client.transcript)
        publisher.signal(SIGKILL)
    }

    /// A service left published by a program that stopped: the host answers, and refuses.
    func testAPublishedPortNobodyListensOnIsSaidToBeRefused() throws {
        let name = TestLAN.uniqueName("stale")
        // Port 9 (discard) on a: nothing listens there.
        let stale = try TestLAN.command(on: "a", ["avahi-publish", "-s", name, "_p2pipp._tcp", "9"])
        defer { stale.signal(SIGTERM); _ = stale.waitForExit() }
        XCTAssertNotNil(waitForStderr(stale) { $0.hasPrefix("Established under name") }, stale.transcript)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(client.waitForExit(timeout: 20), 75, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("\"\(name)\" is published, but its host refuses the connection: nothing listens on the published port")
                                               && $0.contains("Connection refused") }, client.transcript)
    }

    func testVerifyTellsServicesThatAnswerFromOnesThatVanished() throws {
        let gone = TestLAN.uniqueName("gone")
        let (far, _) = try publish(gone)
        let here = TestLAN.uniqueName("here")
        let near = try TestLAN.run("svc-publish", on: "b", ["--name", here, "--json"])
        XCTAssertNotNil(near.waitForEvent { $0["event"] as? String == "registered" }, near.transcript)
        let healthy = try TestLAN.run("svc-browse", on: "b", ["--once", "--verify", "--json"])
        XCTAssertEqual(healthy.waitForExit(), 0, healthy.transcript)
        XCTAssertEqual(healthy.jsonEvents.first { $0["name"] as? String == gone }?["answering"] as? Bool, true, healthy.transcript)

        XCTAssertEqual(try TestLAN.control(["link", "down", "a"]), 0)
        defer { _ = try? TestLAN.control(["link", "up", "a"]) }
        let verified = try TestLAN.run("svc-browse", on: "b", ["--once", "--verify", "--json"])
        XCTAssertEqual(verified.waitForExit(timeout: 20), 0, verified.transcript)
        let stale = try XCTUnwrap(verified.jsonEvents.first { $0["name"] as? String == gone }, "still listed from the cache: " + verified.transcript)
        XCTAssertEqual(stale["answering"] as? Bool, false)
        XCTAssertNotNil(stale["verify_error"] as? String)
        XCTAssertEqual(verified.jsonEvents.first { $0["name"] as? String == here }?["answering"] as? Bool, true, verified.transcript)
        let text = try TestLAN.run("svc-browse", on: "b", ["--once", "--verify"])
        XCTAssertEqual(text.waitForExit(timeout: 20), 0, text.transcript)
        XCTAssertTrue(text.stdout.contains { $0.hasPrefix("added \"\(gone)\"") && $0.contains("[not answering: ") }, text.transcript)
        XCTAssertTrue(text.stdout.contains { $0.hasPrefix("added \"\(here)\"") && $0.hasSuffix("[answering]") }, text.transcript)
        far.signal(SIGKILL)
        near.signal(SIGTERM)
        XCTAssertEqual(near.waitForExit(), 0)
    }

    /// `--verify` reads the room's HELLO and says GOODBYE instead of joining: the publisher
    /// prints nothing about it, and the first member to join is still #1.
    func testVerifyIsQuietOnThePublisherAndTakesNoMemberNumber() throws {
        let name = TestLAN.uniqueName("quiet")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name])
        XCTAssertNotNil(publisher.waitForLine { $0.contains("registered \"") }, publisher.transcript)
        for _ in 0..<2 {
            let browser = try TestLAN.run("svc-browse", on: "b", ["--once", "--verify"])
            XCTAssertEqual(browser.waitForExit(timeout: 20), 0, browser.transcript)
            XCTAssertTrue(browser.stdout.contains { $0.hasPrefix("added \"\(name)\"") && $0.hasSuffix("[answering]") }, browser.transcript)
        }
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "first", "--message", "hi"])
        XCTAssertEqual(member.waitForExit(timeout: 20), 0, member.transcript)
        let joined = try XCTUnwrap(publisher.waitForLine { $0.contains("joined #") }, publisher.transcript)
        // (a timestamp may come first; the member's key and the connection's safety code follow its name)
        XCTAssertTrue(joined.range(of: #"joined #1 first \(key [A-Za-z0-9+/]{12}, safety code \d{3} \d{3} \d{3} \d{3}\) from "#,
                                   options: .regularExpression) != nil, joined)
        XCTAssertNotNil(publisher.waitForLine { $0.contains("left #1 first") }, publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
        XCTAssertEqual(publisher.stdout.filter { !$0.contains("registered \"") && !$0.contains("first") }, [], publisher.transcript)
        XCTAssertEqual(publisher.stderr, [], publisher.transcript)
    }

    func testLinesAreReportedNotSentWhenTheClientGivesUp() throws {
        let name = TestLAN.uniqueName("gone")
        let (publisher, _) = try publish(name)
        let client = try join(name, as: "hopeful", ["--retry-max", "1", "--timeout", "1"])
        publisher.signal(SIGKILL)
        XCTAssertNotNil(waitForStderr(client) { $0.contains("connection lost") }, client.transcript)
        client.send("never delivered")
        XCTAssertEqual(client.waitForExit(timeout: 20), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains("svc-connect: error: not sent: never delivered"), client.transcript)
    }

    func testASilentPeerIsDroppedByHeartbeatWhileOthersAreServed() throws {
        let name = TestLAN.uniqueName("pulse")
        let (publisher, _) = try publish(name, ["--heartbeat", "0.5"])
        let sleeper = try join(name, as: "sleeper")
        let awake = try join(name, as: "awake", ["--heartbeat", "0.5"])
        sleeper.signal(SIGSTOP)
        defer { sleeper.signal(SIGCONT); sleeper.signal(SIGKILL) }
        let left = publisher.waitForEvent(timeout: 10) { $0["event"] as? String == "left" && $0["name"] as? String == "sleeper" }
        XCTAssertTrue((left?["reason"] as? String ?? "").hasPrefix("stopped answering: no sign of life for 2 s, 3 pings unanswered"), publisher.transcript)
        publisher.send("still here")
        XCTAssertNotNil(awake.waitForEvent { $0["text"] as? String == "still here" }, awake.transcript)
        XCTAssertFalse(publisher.jsonEvents.contains { $0["event"] as? String == "left" && $0["name"] as? String == "awake" },
                       "a member that answers pings stays")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testHostilePeersGetErrorFramesAndTheServerKeepsServing() throws {
        let name = TestLAN.uniqueName("fortress")
        // --allow-plaintext: hostile-peer speaks plaintext; the frame layer is the same inside TLS.
        let (publisher, port) = try publish(name, ["--handshake-timeout", "1", "--allow-plaintext"])
        let host = try TestLAN.addresses(of: "a").ipv4
        let member = try join(name, as: "regular")
        // A silent peer gets no ERROR: before a connection's first byte the server cannot tell
        // TLS from plaintext, so it says nothing (docs/PROTOCOL.md version 2) and closes it.
        let expectations: [(mode: String, code: Int?, closes: Bool)] = [
            ("silent", nil, true), ("huge-frame", 3, true), ("bad-magic", 1, true), ("new-version", 2, true), ("unknown-type", 4, false),
        ]
        for (mode, code, closes) in expectations {
            let peer = try TestLAN.command(on: "b", ["/usr/bin/python3", TestLAN.script("hostile-peer"), host, String(port), mode])
            _ = peer.waitForExit(timeout: 40)
            let errors = peer.jsonEvents.filter { $0["type"] as? Int == 4 }
            XCTAssertEqual(errors.first?["error_code"] as? Int, code, "\(mode): " + peer.transcript)
            if code == nil {
                XCTAssertFalse(peer.jsonEvents.contains { $0["type"] != nil }, "\(mode): nothing is said before the first byte: " + peer.transcript)
            }
            if closes {
                XCTAssertEqual(peer.jsonEvents.last?["closed"] as? Bool, true, "\(mode): " + peer.transcript)
            } else {
                XCTAssertTrue(peer.jsonEvents.contains { $0["type"] as? Int == 0x12 }, "\(mode): the WHO after the unknown frame was answered")
            }
            publisher.send("after \(mode)")
            XCTAssertNotNil(member.waitForEvent { $0["text"] as? String == "after \(mode)" }, "\(mode): " + member.transcript)
        }
        XCTAssertTrue(publisher.jsonEvents.contains { $0["event"] as? String == "refused" && ($0["reason"] as? String ?? "").contains("handshake-timeout") },
                      publisher.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testAFullRoomRefusesClearlyAndEchoModeAnswersTheSender() throws {
        let name = TestLAN.uniqueName("tiny")
        let (publisher, _) = try publish(name, ["--max-clients", "1", "--echo"])
        let first = try join(name, as: "first")
        let second = try TestLAN.run("svc-connect", on: "b", [name, "--as", "second"])
        XCTAssertEqual(second.waitForExit(), 76, second.transcript)
        XCTAssertTrue(second.stderr.contains { $0.contains("refused us") && $0.contains("server-full") && $0.contains("the room is full: it has 1 member;") },
                      second.transcript)
        first.send("ping me back")
        let echo = try XCTUnwrap(first.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "ping me back" }, first.transcript)
        XCTAssertEqual(echo["from"] as? String, name)
        XCTAssertEqual(echo["to"] as? String, "first")
        first.closeStdin()
        XCTAssertEqual(first.waitForExit(), 0, first.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testFilesBothWaysWithSlashSend() throws {
        let directory = NSTemporaryDirectory() + "svc-send-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let upload = directory + "/up.txt"
        let download = directory + "/down.txt"
        try "from the member\n".write(toFile: upload, atomically: true, encoding: .utf8)
        try "from the publisher\n".write(toFile: download, atomically: true, encoding: .utf8)

        let name = TestLAN.uniqueName("swap")
        let (publisher, _) = try publish(name, ["--inbox", directory + "/server-inbox"])
        let member = try join(name, as: "dora", ["--inbox", directory + "/client-inbox"])
        member.send("/send \(upload)")
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "file-sent" && $0["stored_as"] as? String == "up.txt" }, member.transcript)
        publisher.send("/send dora \(download)")
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "file-sent" && $0["to"] as? String == "dora" }, publisher.transcript)
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "file-stored" && $0["name"] as? String == "down.txt" }, member.transcript)
        XCTAssertEqual(try String(contentsOfFile: directory + "/server-inbox/up.txt", encoding: .utf8), "from the member\n")
        XCTAssertEqual(try String(contentsOfFile: directory + "/client-inbox/down.txt", encoding: .utf8), "from the publisher\n")

        publisher.send("/send nobody \(download)")
        member.send("/send /nonexistent/file")
        XCTAssertNotNil(waitForStderr(member) { $0.contains("cannot send /nonexistent/file: No such file or directory; nothing was sent") }, member.transcript)
        XCTAssertNotNil(waitForStderr(publisher) { $0.contains("nobody called 'nobody' is in the room") }, publisher.transcript)
        member.closeStdin()
        XCTAssertEqual(member.waitForExit(), 0, "a mistyped path is reported and changes nothing else: " + member.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

}
