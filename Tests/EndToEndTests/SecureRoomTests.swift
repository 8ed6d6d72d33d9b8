import Foundation
import XCTest

/// Secure rooms on the virtual LAN (issue 11, points 6 to 8): the publisher on host a, members
/// on host b, the attacker on host c. The Python peer (Scripts/svc-peer.py, written from
/// docs/PROTOCOL.md alone) proves the protocol; the hostile clients and the relay are
/// Scripts/svc-attack.py. Every key is a file of the test's own.
class SecureRoomTestCase: FileTestCase {
    override var directoryPrefix: String { "svc-secure" }

    /// Host a's IPv4 address, where the publisher listens.
    var publisherAddress = ""
    /// The attacker's (host c) IPv4 address.
    var attackerAddress = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        publisherAddress = try TestLAN.addresses(of: "a").ipv4
        attackerAddress = try TestLAN.addresses(of: "c").ipv4
    }

    /// A key directory of this test's own for svc-peer.py `--identity-dir` (0700; the key is
    /// made in it on first use).
    func peerKeyDirectory(_ who: String) throws -> String {
        let path = directory + "/\(who)-key"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// svc-publish on host a with its own key; returns it, its port and its key (full form)
    /// from the `registered` event.
    func publish(_ name: String, identity: String, _ extra: [String] = []) throws -> (ToolProcess, port: Int, key: String) {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json", "--identity", identity] + extra)
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return (publisher, try XCTUnwrap(registered["port"] as? Int, publisher.transcript), try XCTUnwrap(registered["key"] as? String, publisher.transcript))
    }

    /// Scripts/svc-peer.py on `host` (b unless given).
    func peer(_ arguments: [String], on host: String = "b") throws -> ToolProcess {
        try TestLAN.command(on: host, ["/usr/bin/python3", TestLAN.script("svc-peer.py")] + arguments)
    }

    /// Scripts/svc-attack.py on `host` (c, the attacker, unless given).
    func attack(_ arguments: [String], on host: String = "c") throws -> ToolProcess {
        try TestLAN.command(on: host, ["/usr/bin/python3", TestLAN.script("svc-attack.py")] + arguments)
    }

    /// A well-behaved member: svc-peer.py on host b checking the publisher's key, sending what
    /// is written to its standard input; returns once it is welcomed.
    func steadyMember(port: Int, key: String, name: String = "steady") throws -> ToolProcess {
        let member = try peer([publisherAddress, String(port), "--fingerprint", key, "--name", name, "--timeout", "30"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "received" && $0["frame"] as? String == "welcome" }, member.transcript)
        return member
    }

    /// Whether `member` (svc-peer.py) receives text the publisher types now.
    func isServed(_ member: ToolProcess, by publisher: ToolProcess, after what: String) -> Bool {
        let text = "still served after \(what)"
        publisher.send(text)
        return member.waitForEvent { $0["event"] as? String == "received" && $0["frame"] as? String == "text" && $0["text"] as? String == text } != nil
    }

    /// The svc-peer.py event named `name` (the last one), once it printed it.
    func event(_ name: String, of process: ToolProcess) -> [String: Any]? {
        process.jsonEvents.last { $0["event"] as? String == name }
    }

    /// The name svc-peer.py was welcomed with.
    func welcomedName(_ member: ToolProcess) -> String? {
        member.jsonEvents.first { $0["event"] as? String == "received" && $0["frame"] as? String == "welcome" }?["name"] as? String
    }

    /// The publisher's `joined` events for `name`.
    func joined(_ publisher: ToolProcess, _ name: String) -> [[String: Any]] {
        publisher.jsonEvents.filter { $0["event"] as? String == "joined" && $0["name"] as? String == name }
    }

    /// The short form of a full key (`SHA256:` and its first 12 base64 characters).
    func short(_ key: String) -> String { String(key.dropFirst("SHA256:".count).prefix(12)) }

    func stop(_ processes: ToolProcess...) {
        for process in processes {
            process.signal(SIGTERM)
            _ = process.waitForExit()
        }
    }
}

/// Point 7: the Python peer in a TLS room with the Swift tools.
final class SecureRoomTests: SecureRoomTestCase {
    func testThePythonPeerExchangesTextAndFilesBothWaysOverTLSAndBothSidesShowTheSameKeyAndSafetyCode() throws {
        let inbox = directory + "/inbox", peerInbox = directory + "/peer-inbox"
        for path in [inbox, peerInbox] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        let toPublisher = directory + "/to-publisher.bin", toPeer = directory + "/to-peer.bin"
        let random = try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/urandom"))
        try random.readData(ofLength: 300_000).write(to: URL(fileURLWithPath: toPublisher))
        try random.readData(ofLength: 1_500_000).write(to: URL(fileURLWithPath: toPeer))
        try random.close()
        let name = TestLAN.uniqueName("tls room")
        let (publisher, port, key) = try publish(name, identity: keyFile("room"), ["--inbox", inbox])

        // A Swift member too (svc-connect, first contact over TLS).
        let swift = try TestLAN.run("svc-connect", on: "b", [name, "--as", "swift", "--json"])
        XCTAssertNotNil(swift.waitForEvent { $0["event"] as? String == "joined" }, swift.transcript)

        // Checked by a 12-character prefix of the key, as --fingerprint allows.
        let py = try peer([publisherAddress, String(port), "--fingerprint", short(key), "--identity-dir", peerKeyDirectory("py"), "--name", "py",
                           "--inbox", peerInbox, "--expect-texts", "2", "--expect-files", "2", "--timeout", "20"])
        let tls = try XCTUnwrap(py.waitForEvent { $0["event"] as? String == "tls" }, py.transcript)
        XCTAssertEqual(tls["version"] as? String, "TLSv1.3", py.transcript)
        XCTAssertEqual(tls["alpn"] as? String, "p2pm/2", py.transcript)
        XCTAssertEqual(tls["server_key"] as? String, key, "the key presented in the handshake is the one announced")
        let peerKey = try XCTUnwrap(event("identity", of: py)?["key"] as? String, py.transcript)

        // The publisher's joined event: the member's key and the session's safety code, the
        // same as the peer computed from its side of the session.
        let join = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "py" }, publisher.transcript)
        XCTAssertEqual(join["key"] as? String, peerKey, "the joined event names the member's key: \(join)")
        let code = try XCTUnwrap(tls["safety_code"] as? String, "svc-peer.py computes the safety code: " + py.transcript)
        XCTAssertNotNil(code.range(of: #"^\d{3} \d{3} \d{3} \d{3}$"#, options: .regularExpression), code)
        XCTAssertEqual(join["safety_code"] as? String, code, "both sides show the same safety code: \(join)")

        // Text each way with the publisher and with the Swift member; a file from each to the peer.
        py.send("hello from python")
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == "py" && $0["text"] as? String == "hello from python" },
                        publisher.transcript)
        XCTAssertNotNil(swift.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == "py" && $0["text"] as? String == "hello from python" },
                        swift.transcript)
        publisher.send("hello from swift")
        swift.send("hello from the swift member")
        publisher.send("/send py \(toPeer)")
        swift.send("/send py \(toPublisher)")
        XCTAssertTrue(eventually(within: 30) { py.jsonEvents.filter { $0["event"] as? String == "file-stored" }.count == 2 }, py.transcript)
        py.closeStdin()
        XCTAssertEqual(py.waitForExit(timeout: 30), 0, py.transcript)
        for (text, from) in [("hello from swift", name), ("hello from the swift member", "swift")] {
            XCTAssertTrue(py.jsonEvents.contains { $0["frame"] as? String == "text" && $0["text"] as? String == text && $0["from"] as? String == from }, py.transcript)
        }
        let stored = py.jsonEvents.filter { $0["event"] as? String == "file-stored" }.compactMap { $0["path"] as? String }
        XCTAssertEqual(try Set(stored.map(sha256(of:))), try Set([toPeer, toPublisher].map(sha256(of:))), py.transcript)
        swift.closeStdin()
        XCTAssertEqual(swift.waitForExit(timeout: 20), 0, swift.transcript)

        let sender = try peer([publisherAddress, String(port), "--fingerprint", key, "--name", "py-sender", "--say", "a file follows", "--send", toPublisher])
        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, sender.transcript)
        XCTAssertEqual(event("file-sent", of: sender)?["status"] as? Int, 0, sender.transcript)
        XCTAssertTrue(eventually { self.inboxFiles(inbox) == ["to-publisher.bin"] }, "\(inboxFiles(inbox))\n" + publisher.transcript)
        XCTAssertEqual(try sha256(of: inbox + "/to-publisher.bin"), try sha256(of: toPublisher))
        stop(publisher)
    }

}

/// Points 6 and 8: hostile clients, a relay and name theft, from host c, with a well-behaved
/// member served throughout.
final class SecureRoomAttackTests: SecureRoomTestCase {
    func testClientsThatDoNotSpeakOurTLSAreRefusedAndAMemberIsServedThroughout() throws {
        let name = TestLAN.uniqueName("no downgrade")
        let (publisher, port, key) = try publish(name, identity: keyFile("room"), ["--handshake-timeout", "2"])
        let steady = try steadyMember(port: port, key: key)

        // A plaintext version 1 HELLO: nothing before it, then ERROR tls-required (14) in
        // plaintext and the connection closed.
        let plain = try attack(["plain-hello", publisherAddress, String(port)])
        XCTAssertEqual(plain.waitForExit(timeout: 20), 0, plain.transcript)
        XCTAssertEqual(plain.jsonEvents.first?["sent_before_our_first_byte"] as? Int, 0, plain.transcript)
        let error = plain.jsonEvents.first { $0["frame"] as? String == "error" }
        XCTAssertEqual(error?["code"] as? Int, 14, plain.transcript)
        XCTAssertEqual(error?["name"] as? String, "tls-required", plain.transcript)
        XCTAssertEqual(plain.jsonEvents.last?["closed"] as? Bool, true, plain.transcript)
        XCTAssertTrue(isServed(steady, by: publisher, after: "plain-hello"), steady.transcript)

        // TLS 1.2, TLS 1.3 without ALPN p2pm/2, TLS 1.3 without a client certificate: each
        // refused in the handshake, and the publisher says why.
        for (probe, reason) in [("tls12", "TLS 1.3"), ("no-alpn", "p2pm/2"), ("no-cert", "no key")] {
            let client = try attack([probe, publisherAddress, String(port)])
            XCTAssertEqual(client.waitForExit(timeout: 20), 0, "\(probe): " + client.transcript)
            XCTAssertEqual(client.jsonEvents.first?["refused"] as? Bool, true, "\(probe): " + client.transcript)
            XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "refused" && ($0["reason"] as? String ?? "").contains(reason) },
                            "\(probe): " + publisher.transcript)
            XCTAssertTrue(isServed(steady, by: publisher, after: probe), steady.transcript)
        }

        // Half a ClientHello, then silence: closed by the handshake timeout (2 s here).
        let half = try attack(["half-hello", publisherAddress, String(port), "6"])
        XCTAssertEqual(half.waitForExit(timeout: 20), 0, half.transcript)
        let result = try XCTUnwrap(half.jsonEvents.first, half.transcript)
        XCTAssertEqual(result["closed"] as? Bool, true, half.transcript)
        XCTAssertLessThan(result["after"] as? Double ?? 99, 5, "closed within the handshake timeout, not later: " + half.transcript)
        XCTAssertEqual(result["received"] as? Int, 0, "nothing is said to half a ClientHello: " + half.transcript)
        XCTAssertTrue(isServed(steady, by: publisher, after: "half-hello"), steady.transcript)

        XCTAssertEqual(publisher.jsonEvents.filter { $0["event"] as? String == "joined" }.count, 1, "only the steady member joined: " + publisher.transcript)
        steady.closeStdin()
        XCTAssertEqual(steady.waitForExit(timeout: 20), 0, steady.transcript)
        stop(publisher)
    }

    func testARelayTerminatingTLSIsRefusedByAPinnedPeerAndShowsDifferentSafetyCodesOtherwise() throws {
        let name = TestLAN.uniqueName("relayed")
        let (publisher, port, key) = try publish(name, identity: keyFile("room"))
        let steady = try steadyMember(port: port, key: key)
        let relay = try attack(["relay", "0", publisherAddress, String(port)])
        defer { stop(relay) }
        let listening = try XCTUnwrap(relay.waitForEvent { $0["event"] as? String == "listening" }, relay.transcript)
        let relayPort = String(try XCTUnwrap(listening["port"] as? Int, relay.transcript))

        // Knowing the real key: the relay's key is refused after the handshake, before any frame.
        let pinned = try peer([attackerAddress, relayPort, "--fingerprint", key, "--name", "pinned", "--say", "secret for the room"])
        XCTAssertEqual(pinned.waitForExit(timeout: 20), 77, pinned.transcript)
        XCTAssertTrue(pinned.stderr.contains { $0.contains("presented the key \(listening["relay_key"] as? String ?? "?")") && $0.contains("nothing was sent") },
                      pinned.transcript)
        XCTAssertFalse(pinned.jsonEvents.contains { $0["event"] as? String == "sent" }, pinned.transcript)
        XCTAssertTrue(isServed(steady, by: publisher, after: "the refused relay"), steady.transcript)
        XCTAssertFalse(publisher.jsonEvents.contains { $0["event"] as? String == "joined" && $0["name"] as? String == "pinned" }, publisher.transcript)
        XCTAssertFalse(publisher.stdout.contains { $0.contains("secret for the room") }, publisher.transcript)

        // Accepting any key: the session runs through the relay, and the safety code the
        // member sees differs from the one the publisher sees.
        let fooled = try peer([attackerAddress, relayPort, "--any-key", "--name", "fooled", "--say", "through the relay"])
        XCTAssertEqual(fooled.waitForExit(timeout: 20), 0, fooled.transcript)
        let memberCode = try XCTUnwrap(event("tls", of: fooled)?["safety_code"] as? String, fooled.transcript)
        let relayed = try XCTUnwrap(relay.waitForEvent { $0["event"] as? String == "relayed" && $0["client_safety_code"] as? String == memberCode }, relay.transcript)
        let publisherSide = try XCTUnwrap(relayed["target_safety_code"] as? String, relay.transcript)
        XCTAssertNotEqual(memberCode, publisherSide, "a relay holds two sessions with different safety codes")
        XCTAssertEqual(relayed["target_key"] as? String, key, relay.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "through the relay" }, publisher.transcript)
        let join = try XCTUnwrap(joined(publisher, "fooled").first, publisher.transcript)
        XCTAssertEqual(join["safety_code"] as? String, publisherSide, "the publisher shows its side's code: \(join)")
        XCTAssertNotEqual(join["safety_code"] as? String, memberCode, "the publisher's code differs from the member's: \(join)")
        XCTAssertEqual(join["key"] as? String, relayed["relay_key"] as? String, "the publisher sees the relay's key, not the member's: \(join)")

        steady.closeStdin()
        XCTAssertEqual(steady.waitForExit(timeout: 20), 0, steady.transcript)
        stop(publisher)
    }

    func testANameBelongsToTheFirstKeyWhetherItsOwnerIsPresentOrAway() throws {
        let name = TestLAN.uniqueName("names")
        let (publisher, port, key) = try publish(name, identity: keyFile("room"))
        let steady = try steadyMember(port: port, key: key)
        let ownerKey = try peerKeyDirectory("alice"), thiefKey = try peerKeyDirectory("mallory")
        func join(_ keyDirectory: String, from host: String) throws -> ToolProcess {
            let member = try peer([publisherAddress, String(port), "--fingerprint", key, "--identity-dir", keyDirectory, "--name", "alice", "--timeout", "20"], on: host)
            XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "received" && $0["frame"] as? String == "welcome" }, member.transcript)
            return member
        }
        func leave(_ member: ToolProcess) {
            member.closeStdin()
            XCTAssertEqual(member.waitForExit(timeout: 20), 0, member.transcript)
        }

        let owner = try join(ownerKey, from: "b")
        let ownerJoined = Date()
        XCTAssertEqual(welcomedName(owner), "alice", owner.transcript)
        let ownerIdentity = try XCTUnwrap(event("identity", of: owner)?["key"] as? String, owner.transcript)

        // Present: another key asking for the name gets a variant.
        let thief = try join(thiefKey, from: "c")
        let variant = try XCTUnwrap(welcomedName(thief), thief.transcript)
        XCTAssertNotEqual(variant, "alice", thief.transcript)
        XCTAssertTrue(variant.hasPrefix("alice-"), variant)
        leave(thief)

        // Away: still not the thief's. (A name stays bound while its member is away once the
        // member stayed 20 s: a peer joining and leaving binds nothing.)
        Thread.sleep(until: ownerJoined.addingTimeInterval(21))
        leave(owner)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "left" && $0["name"] as? String == "alice" }, publisher.transcript)
        let again = try join(thiefKey, from: "c")
        XCTAssertNotEqual(welcomedName(again), "alice", "a name is not free while its owner is away: " + again.transcript)
        XCTAssertTrue(isServed(steady, by: publisher, after: "the name theft"), steady.transcript)
        leave(again)

        // The owner's key comes back and gets its name.
        let back = try join(ownerKey, from: "b")
        XCTAssertEqual(welcomedName(back), "alice", back.transcript)
        // The member hears WELCOME before the publisher's own line about it is read here.
        let backKey = ownerIdentity, firstClient = joined(publisher, "alice").first?["client"] as? Int
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "alice"
                                                 && $0["key"] as? String == backKey && $0["client"] as? Int != firstClient }, publisher.transcript)
        XCTAssertEqual(joined(publisher, "alice").count, 2, publisher.transcript)
        XCTAssertTrue(joined(publisher, "alice").allSatisfy { $0["key"] as? String == ownerIdentity }, "only the owner's key ever joined as alice: " + publisher.transcript)
        leave(back)
        steady.closeStdin()
        XCTAssertEqual(steady.waitForExit(timeout: 20), 0, steady.transcript)
        stop(publisher)
    }

    /// A member that speaks SESSION (Scripts/p2pm.py over TLS with the key in argv[4]):
    /// HELLO as argv[5] with capability 8, SESSION id argv[6] next argv[7], one TEXT per
    /// further argument, waits for the ACK of the last (or an ERROR), stays argv[8] seconds,
    /// says GOODBYE. Prints each frame it gets as JSON. It does not check the server's key: it
    /// attacks the server, the server is not its secret's keeper.
    static let sessionPeer = #"""
        import json, socket, struct, sys, time
        sys.path.insert(0, sys.argv[1])
        import p2pm
        host, port, keys, name = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
        session, first, hold, texts = int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8]), sys.argv[9:]
        identity = p2pm.Identity.in_directory(keys)
        raw = socket.create_connection((host, port), timeout=5)
        stream = p2pm.FrameStream(p2pm.tls_context(identity).wrap_socket(raw, server_hostname=None))
        print(json.dumps({"event": "identity", "key": identity.key}), flush=True)
        def frames(until, seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                got = stream.next(max(0.01, end - time.monotonic()))
                if got is None:
                    continue
                fields = p2pm.decode(got[0], got[2])
                print(json.dumps(fields), flush=True)
                if fields["frame"] == "ping":
                    stream.send(p2pm.frame("pong", got[2]), 5)
                if until(fields):
                    return
        stream.send(p2pm.hello(name, 8), 5)
        frames(lambda f: f["frame"] == "welcome", 5)
        stream.send(p2pm.frame("session", struct.pack(">QQ", session, first)), 5)
        for text in texts:
            stream.send(p2pm.frame("text", p2pm.string("") + p2pm.string("") + text.encode()), 5)
        frames(lambda f: f["frame"] == "error" or (f["frame"] == "ack" and f["through"] == first + len(texts)), 5)
        frames(lambda f: False, hold)
        stream.send(p2pm.frame("goodbye", b"done"), 5)
        stream.finish(1)
        """#

    func testASessionIdReplayedByAnotherKeyIsASessionOfItsOwn() throws {
        let name = TestLAN.uniqueName("sessions")
        let (publisher, port, key) = try publish(name, identity: keyFile("room"))
        let steady = try steadyMember(port: port, key: key)
        let aliceKeys = try peerKeyDirectory("alice"), malloryKeys = try peerKeyDirectory("mallory")
        let id = String(UInt64.random(in: 1...(1 << 62)))
        func session(_ keys: String, as member: String, next: Int, hold: Double = 0, _ texts: [String], from host: String) throws -> ToolProcess {
            let scripts = URL(fileURLWithPath: TestLAN.script("p2pm.py")).deletingLastPathComponent().path
            return try TestLAN.command(on: host, ["/usr/bin/python3", "-c", Self.sessionPeer, scripts, publisherAddress, String(port), keys, member, id,
                                                  String(next), String(hold)] + texts)
        }
        func acknowledged(_ peer: ToolProcess, through: Int) -> Bool {
            peer.waitForEvent { $0["frame"] as? String == "ack" && $0["through"] as? Int == through } != nil
        }
        func received(_ text: String) -> Int {
            steady.jsonEvents.filter { $0["frame"] as? String == "text" && $0["text"] as? String == text }.count
        }
        func errors(_ peer: ToolProcess) -> [[String: Any]] { peer.jsonEvents.filter { $0["frame"] as? String == "error" } }

        let alice = try session(aliceKeys, as: "alice", next: 0, ["alice 0", "alice 1"], from: "b")
        XCTAssertEqual(alice.waitForExit(timeout: 20), 0, alice.transcript)
        XCTAssertTrue(acknowledged(alice, through: 2), alice.transcript)

        // Mallory (host c, another key) opens alice's session id from the start: were it
        // alice's session, her texts would be dropped as repeats (and alice's cut short).
        let mallory = try session(malloryKeys, as: "mallory", next: 0, ["mallory 0", "mallory 1"], from: "c")
        XCTAssertEqual(mallory.waitForExit(timeout: 20), 0, mallory.transcript)
        XCTAssertTrue(acknowledged(mallory, through: 2), mallory.transcript)
        XCTAssertEqual(errors(mallory).count, 0, mallory.transcript)

        // Alice comes back and sends "alice 1" again with a new one: her session is intact, the
        // repeat is dropped. While she holds it, mallory opens the same id again: not refused as
        // held by another connection, since it is not the same session.
        let back = try session(aliceKeys, as: "alice", next: 1, hold: 3, ["alice 1", "alice 2"], from: "b")
        XCTAssertTrue(acknowledged(back, through: 3), back.transcript)
        let again = try session(malloryKeys, as: "mallory", next: 2, ["mallory 2"], from: "c")
        XCTAssertEqual(again.waitForExit(timeout: 20), 0, again.transcript)
        XCTAssertTrue(acknowledged(again, through: 3), again.transcript)
        XCTAssertEqual(errors(again).count, 0, again.transcript)
        XCTAssertEqual(back.waitForExit(timeout: 20), 0, back.transcript)
        XCTAssertEqual(errors(back).count, 0, back.transcript)

        XCTAssertTrue(isServed(steady, by: publisher, after: "the sessions"), steady.transcript)
        for text in ["alice 0", "alice 1", "alice 2", "mallory 0", "mallory 1", "mallory 2"] {
            XCTAssertEqual(received(text), 1, "\(text) relayed exactly once: " + steady.transcript)
        }
        steady.closeStdin()
        XCTAssertEqual(steady.waitForExit(timeout: 20), 0, steady.transcript)
        stop(publisher)
    }

    func testAKeyFileOthersCanReadIsRefusedAndAFirstKeyIsMadePrivate() throws {
        // A new user: $XDG_CONFIG_HOME/svc made 0700, identity.pem 0600.
        let config = directory + "/config"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let name = TestLAN.uniqueName("first key")
        let fresh = try TestLAN.command(on: "a", ["/usr/bin/env", "XDG_CONFIG_HOME=\(config)", TestLAN.tool("svc-publish"), "--name", name, "--json"])
        XCTAssertNotNil(fresh.waitForEvent { $0["event"] as? String == "registered" }, fresh.transcript)
        stop(fresh)
        let made = config + "/svc/identity.pem"
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: config + "/svc")[.posixPermissions] as? Int, 0o700)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: made)[.posixPermissions] as? Int, 0o600)

        // The same key, readable by others: refused before anything is published.
        let loose = directory + "/loose.pem"
        try FileManager.default.copyItem(atPath: made, toPath: loose)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: loose)
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", TestLAN.uniqueName("loose key"), "--json", "--identity", loose])
        XCTAssertEqual(publisher.waitForExit(timeout: 20), 78, publisher.transcript)
        XCTAssertTrue(publisher.stderr.contains { $0.contains("permissions 0644 for '\(loose)' are too open") && $0.contains("chmod 600 '\(loose)'") },
                      publisher.transcript)
        XCTAssertFalse(publisher.jsonEvents.contains { $0["event"] as? String == "registered" }, publisher.transcript)
    }
}

/// svc-connect's trust (points 3 and 6, hostile cases of point 8): pins in known_peers, a
/// changed key, --fingerprint, --strict, a spoofed announcement, and no plaintext for a pinned
/// name. Each test has an XDG_CONFIG_HOME of its own (its known_peers and default key).
final class SecureConnectTests: SecureRoomTestCase {
    /// This test's XDG_CONFIG_HOME.
    var config = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        config = directory + "/config"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    /// svc-connect on host b with this test's XDG_CONFIG_HOME (or `configHome`).
    func connect(_ arguments: [String], configHome: String? = nil) throws -> ToolProcess {
        try TestLAN.command(on: "b", ["/usr/bin/env", "XDG_CONFIG_HOME=\(configHome ?? config)", TestLAN.tool("svc-connect")] + arguments)
    }

    /// An svc-connect that has exited: its output and its exit status (nil: killed after 30 s).
    struct Finished {
        let process: ToolProcess
        let status: Int32?
        var transcript: String { process.transcript }
    }

    /// A one-line message to the room `name`; returns svc-connect once it exited.
    func message(_ name: String, _ text: String, _ extra: [String] = [], configHome: String? = nil) throws -> Finished {
        let client = try connect([name, "--message", text, "--no-reconnect", "--timeout", "5"] + extra, configHome: configHome)
        return Finished(process: client, status: client.waitForExit(timeout: 30))
    }

    /// The lines of known_peers that are pins (no comments, no blank lines).
    func pins(in configHome: String? = nil) -> [String] {
        let text = (try? String(contentsOfFile: (configHome ?? config) + "/svc/known_peers", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    /// known_peers' service column for an instance of _p2pipp._tcp in local. (DNS-SD
    /// presentation form; the test names have only letters, digits and spaces).
    func service(_ name: String) -> String {
        name.replacingOccurrences(of: " ", with: "\\032") + "._p2pipp._tcp.local."
    }

    /// Whether `process`'s stderr has a line containing every one of `parts`.
    func said(_ finished: Finished, _ parts: String...) -> Bool {
        said(finished.process, parts)
    }

    func said(_ process: ToolProcess, _ parts: String...) -> Bool {
        said(process, parts)
    }

    func said(_ process: ToolProcess, _ parts: [String]) -> Bool {
        process.stderr.contains { line in parts.allSatisfy { line.contains($0) } }
    }

    func testFirstContactPinsAndAChangedKeyIsRefusedWithTheWarningUntilForgotten() throws {
        let name = TestLAN.uniqueName("pinned room")
        let (first, _, firstKey) = try publish(name, identity: keyFile("old"))
        let contact = try message(name, "first contact")
        XCTAssertEqual(contact.status, 0, contact.transcript)
        let join = try XCTUnwrap(first.waitForEvent { $0["event"] as? String == "joined" }, first.transcript)
        let code = try XCTUnwrap(join["safety_code"] as? String, first.transcript)
        XCTAssertTrue(said(contact, "first contact with '\(name)': pinned its key \(firstKey) (short \(short(firstKey))); safety code \(code)"),
                      "the member is told the key and the same safety code the publisher shows: " + contact.transcript)
        XCTAssertEqual(pins(), ["\(service(name)) \(firstKey)"])
        let again = try message(name, "pinned now")
        XCTAssertEqual(again.status, 0, again.transcript)
        XCTAssertTrue(said(again, "presented its pinned key \(short(firstKey))"), again.transcript)
        stop(first)

        // The same name with another key.
        let (second, _, secondKey) = try publish(name, identity: keyFile("new"))
        let refused = try message(name, "must not arrive")
        XCTAssertEqual(refused.status, 77, refused.transcript)
        XCTAssertTrue(said(refused, "@@@ WARNING: THE KEY OF '\(name)' HAS CHANGED @@@"), refused.transcript)
        XCTAssertTrue(said(refused, "pinned key:", firstKey), refused.transcript)
        XCTAssertTrue(said(refused, "presented key:", secondKey), refused.transcript)
        XCTAssertTrue(said(refused, "svc-connect --forget '\(name)'"), refused.transcript)
        XCTAssertFalse(said(refused, "reconnecting"), refused.transcript)
        XCTAssertFalse(second.jsonEvents.contains { $0["event"] as? String == "joined" || $0["event"] as? String == "text" },
                       "nothing was sent: " + second.transcript)
        XCTAssertEqual(pins(), ["\(service(name)) \(firstKey)"], "the pin is left as it was")

        // A --fingerprint that contradicts the pin is a usage error; plaintext is never
        // allowed for a pinned name.
        let contradicting = try message(name, "must not arrive", ["--fingerprint", secondKey])
        XCTAssertEqual(contradicting.status, 64, contradicting.transcript)
        XCTAssertTrue(said(contradicting, "does not match the key pinned for '\(name)'"), contradicting.transcript)
        let plaintext = try message(name, "must not arrive", ["--allow-plaintext"])
        XCTAssertEqual(plaintext.status, 64, plaintext.transcript)
        XCTAssertTrue(said(plaintext, "'\(name)' is pinned to \(firstKey)"), plaintext.transcript)
        XCTAssertFalse(second.jsonEvents.contains { $0["event"] as? String == "joined" || $0["event"] as? String == "text" }, second.transcript)

        // Forgotten, the new key is pinned at the next first contact.
        let forget = try connect([name, "--forget"])
        XCTAssertEqual(forget.waitForExit(timeout: 20), 0, forget.transcript)
        XCTAssertEqual(pins(), [])
        let renewed = try message(name, "after forgetting")
        XCTAssertEqual(renewed.status, 0, renewed.transcript)
        XCTAssertTrue(said(renewed, "first contact with '\(name)': pinned its key \(secondKey)"), renewed.transcript)
        XCTAssertEqual(pins(), ["\(service(name)) \(secondKey)"])
        XCTAssertNotNil(second.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == "after forgetting" }, second.transcript)
        XCTAssertFalse(second.stdout.contains { $0.contains("must not arrive") }, second.transcript)
        stop(second)
    }

    func testFingerprintAcceptsOnlyThatKeyAndPinsItAndStrictRefusesTheUnknown() throws {
        let name = TestLAN.uniqueName("given key")
        let (publisher, _, key) = try publish(name, identity: keyFile("room"))

        let strict = try message(name, "must not arrive", ["--strict"])
        XCTAssertEqual(strict.status, 77, strict.transcript)
        XCTAssertTrue(said(strict, "'\(name)' is not in known_peers"), strict.transcript)

        let wrong = "SHA256:" + String(repeating: "A", count: 43)
        let mismatch = try message(name, "must not arrive", ["--fingerprint", wrong])
        XCTAssertEqual(mismatch.status, 77, mismatch.transcript)
        XCTAssertTrue(said(mismatch, "presented the key \(key), which does not match --fingerprint"), mismatch.transcript)
        XCTAssertEqual(pins(), [], "nothing is pinned from a refused key")
        XCTAssertFalse(publisher.jsonEvents.contains { $0["event"] as? String == "joined" }, "nothing was sent: " + publisher.transcript)

        // The 12-character short form is enough, and pins the whole key.
        let right = try message(name, "given", ["--fingerprint", short(key)])
        XCTAssertEqual(right.status, 0, right.transcript)
        XCTAssertTrue(said(right, "presented the key given with --fingerprint: pinned it, \(key)"), right.transcript)
        XCTAssertEqual(pins(), ["\(service(name)) \(key)"])
        let pinned = try message(name, "strict and pinned", ["--strict"])
        XCTAssertEqual(pinned.status, 0, pinned.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["text"] as? String == "strict and pinned" }, publisher.transcript)
        XCTAssertFalse(publisher.stdout.contains { $0.contains("must not arrive") }, publisher.transcript)
        stop(publisher)
    }

    func testASpoofedAnnouncementWithTheRoomsKeyCopiedLeadsToNothingBeingSent() throws {
        let name = TestLAN.uniqueName("spoofed")
        let (original, _, key) = try publish(name, identity: keyFile("room"))
        let contact = try message(name, "pinning")
        XCTAssertEqual(contact.status, 0, contact.transcript)
        XCTAssertEqual(pins(), ["\(service(name)) \(key)"])
        // A member of the room when it goes away: it waits for the room to come back.
        let faithful = try connect([name, "--as", "faithful", "--timeout", "5"])
        XCTAssertNotNil(original.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "faithful" }, original.transcript)
        stop(original)
        faithful.send("typed while the room was away")

        // The room lives on under another name, with its member; the attacker on host c
        // announces the old name with the room's TXT key= copied, pointing at its relay to it.
        let (room, port, _) = try publish(TestLAN.uniqueName("moved"), identity: keyFile("room"))
        let steady = try steadyMember(port: port, key: key)
        let relay = try attack(["relay", "0", publisherAddress, String(port)])
        let listening = try XCTUnwrap(relay.waitForEvent { $0["event"] as? String == "listening" }, relay.transcript)
        let relayPort = try XCTUnwrap(listening["port"] as? Int, relay.transcript)
        let relayKey = try XCTUnwrap(listening["relay_key"] as? String, relay.transcript)
        let spoof = try TestLAN.command(on: "c", ["avahi-publish", "-s", name, "_p2pipp._tcp", String(relayPort), "key=\(key)"])
        defer { stop(spoof, relay) }
        XCTAssertNotNil(waitForStderr(spoof, timeout: 20) { $0.hasPrefix("Established") }, spoof.transcript)

        // The waiting member finds the spoof: refused with the warning, nothing sent, no retry.
        XCTAssertEqual(faithful.waitForExit(timeout: 40), 77, faithful.transcript)
        XCTAssertTrue(said(faithful, "@@@ WARNING: THE KEY OF '\(name)' HAS CHANGED @@@"), faithful.transcript)
        XCTAssertTrue(said(faithful, "presented key:", relayKey), faithful.transcript)
        XCTAssertTrue(said(faithful, "not sent: typed while the room was away"), "what was typed is reported as not sent: " + faithful.transcript)
        XCTAssertEqual(relay.jsonEvents.filter { $0["event"] as? String == "relayed" || $0["event"] as? String == "relay-failed" }.count, 1,
                       "one attempt, no other: " + relay.transcript)

        // Pinned: refused with the warning, no reconnect, although it would wait for the room.
        let started = Date()
        let pinned = try connect([name, "--message", "secret", "--timeout", "5"])
        XCTAssertEqual(pinned.waitForExit(timeout: 40), 77, pinned.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, pinned.transcript)
        XCTAssertTrue(said(pinned, "@@@ WARNING: THE KEY OF '\(name)' HAS CHANGED @@@"), pinned.transcript)
        XCTAssertTrue(said(pinned, "presented key:", relayKey), pinned.transcript)
        XCTAssertFalse(said(pinned, "reconnecting"), pinned.transcript)
        XCTAssertEqual(relay.jsonEvents.filter { $0["event"] as? String == "relayed" || $0["event"] as? String == "relay-failed" }.count, 2,
                       "one attempt, no other: " + relay.transcript)

        // First contact (another user): the presented key is not the announced one.
        let strangerConfig = directory + "/stranger"
        try FileManager.default.createDirectory(atPath: strangerConfig, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let stranger = try message(name, "secret", [], configHome: strangerConfig)
        XCTAssertEqual(stranger.status, 77, stranger.transcript)
        XCTAssertTrue(said(stranger, "presented the key \(relayKey), not the key its announcement (TXT key=) names, \(key)"), stranger.transcript)
        XCTAssertEqual(pins(in: strangerConfig), [], "nothing pinned")

        XCTAssertFalse(room.stdout.contains { $0.contains("secret") || $0.contains("typed while the room was away") }, room.transcript)
        XCTAssertEqual(room.jsonEvents.filter { $0["event"] as? String == "joined" }.count, 1, "only the steady member joined: " + room.transcript)
        XCTAssertTrue(isServed(steady, by: room, after: "the spoofed announcement"), steady.transcript)
        steady.closeStdin()
        XCTAssertEqual(steady.waitForExit(timeout: 20), 0, steady.transcript)
        stop(room)
    }

    func testThePublishersJoinedLineShowsTheMembersKeyAndCodeAndALooseKeyFileIsRefusedBySvcConnect() throws {
        let name = TestLAN.uniqueName("loose member")
        // Text output this time: the joined line as a person reads it.
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--identity", keyFile("room"), "--no-timestamps"])
        XCTAssertNotNil(publisher.waitForLine { $0.hasPrefix("registered") }, publisher.transcript)
        let loose = keyFile("member")
        let made = try message(name, "with my own key", ["--identity", loose])
        XCTAssertEqual(made.status, 0, made.transcript)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: loose)[.posixPermissions] as? Int, 0o600)
        // The key svc-connect made and the safety code it showed are on the publisher's joined line.
        let note = try XCTUnwrap(made.process.stderr.first { $0.contains("made a new key for this user: \(loose) (SHA256:") }, made.transcript)
        let memberKey = try XCTUnwrap(note.components(separatedBy: "(").last?.components(separatedBy: ")").first, note)
        let contact = try XCTUnwrap(made.process.stderr.first { $0.contains("first contact with '\(name)'") }, made.transcript)
        let code = try XCTUnwrap(contact.range(of: #"safety code \d{3} \d{3} \d{3} \d{3}"#, options: .regularExpression).map { String(contact[$0]) }, contact)
        XCTAssertNotNil(publisher.waitForLine { $0.contains("joined") && $0.contains("(key \(short(memberKey)), \(code)) from ") }, "\(memberKey), \(code): " + publisher.transcript)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: loose)
        let refused = try message(name, "must not arrive", ["--identity", loose])
        XCTAssertEqual(refused.status, 78, refused.transcript)
        XCTAssertTrue(said(refused, "permissions 0640 for '\(loose)' are too open", "chmod 600 '\(loose)'"), refused.transcript)
        XCTAssertFalse(publisher.stdout.contains { $0.contains("must not arrive") }, publisher.transcript)
        stop(publisher)
    }
}
