import Foundation
import XCTest

/// Chat comforts and wording: history for late joiners, the publisher's own lines,
/// timestamps, renames, tabs, and svc-connect --json covering more than room text.
final class ChatTests: FileTestCase {
    override var directoryPrefix: String { "svc-chat" }

    /// `YYYY-MM-DD HH:MM:SS ` at the start of a line.
    static let timestamp = #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} "#
    /// `(key XXXXXXXXXXXX, safety code NNN NNN NNN NNN)` after a name on the publisher's `joined` line.
    static let keyAndSafetyCode = #"\(key [A-Za-z0-9+/]{12}, safety code \d{3} \d{3} \d{3} \d{3}\)"#

    func matches(_ line: String, _ pattern: String) -> Bool {
        line.range(of: pattern, options: .regularExpression) != nil
    }

    func publish(_ name: String, _ extra: [String] = []) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"] + extra)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func join(_ name: String, as member: String, _ extra: [String] = ["--json"]) throws -> ToolProcess {
        try TestLAN.run("svc-connect", on: "b", [name, "--as", member] + extra)
    }

    func event(_ kind: String, _ fields: [String: String] = [:]) -> ([String: Any]) -> Bool {
        { object in object["event"] as? String == kind && fields.allSatisfy { object[$0.key] as? String == $0.value } }
    }

    /// Members leave at the end of their input (a signal could come before svc-connect has
    /// set its handlers: it does once it has joined), then the publisher stops.
    func leave(_ members: [ToolProcess], _ publisher: ToolProcess) {
        for member in members { member.closeStdin() }
        for member in members { XCTAssertEqual(member.waitForExit(), 0, member.transcript) }
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }

    func testALateJoinerGetsTheLastLinesToEveryoneAndThePublisherSeesItsOwn() throws {
        let name = TestLAN.uniqueName("history")
        let publisher = try publish(name, ["--history", "3"])
        let ann = try join(name, as: "ann")
        let bob = try join(name, as: "bob")
        XCTAssertNotNil(ann.waitForEvent(where: event("joined")), ann.transcript)
        XCTAssertNotNil(bob.waitForEvent(where: event("joined")), bob.transcript)
        ann.send("/msg bob not for the history")
        for line in ["one", "two", "three"] { ann.send(line) }
        XCTAssertNotNil(bob.waitForEvent(where: event("text", ["text": "three"])), bob.transcript)
        publisher.send("from the host")
        publisher.send("/msg ann for ann only")
        // The publisher's own lines are in its own output, /msg as one to one.
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "text" && $0["from"] as? String == name
                                                 && $0["to"] is NSNull && $0["text"] as? String == "from the host" }, publisher.transcript)
        XCTAssertNotNil(publisher.waitForEvent(where: event("text", ["from": name, "to": "ann", "text": "for ann only"])), publisher.transcript)
        XCTAssertNotNil(ann.waitForEvent(where: event("text", ["text": "for ann only"])), ann.transcript)

        let cid = try join(name, as: "cid")
        XCTAssertNotNil(cid.waitForEvent { $0["event"] as? String == "history" && $0["text"] as? String == "from the host" }, cid.transcript)
        let history = cid.jsonEvents.filter { $0["event"] as? String == "history" }
        XCTAssertEqual(history.map { "\($0["from"] as? String ?? "?"): \($0["text"] as? String ?? "?")" },
                       ["ann: two", "ann: three", "\(name): from the host"], cid.transcript)
        for line in history {
            XCTAssertTrue(matches(line["said_at"] as? String ?? "", #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#), "\(line)")
        }
        XCTAssertFalse(cid.jsonEvents.contains { $0["event"] as? String == "text" }, "history is not shown as live text: " + cid.transcript)

        // Without --json: marked as history, with the time it was said.
        let dan = try join(name, as: "dan", [])
        XCTAssertNotNil(dan.waitForLine { self.matches($0, #"^\[history \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] "# + NSRegularExpression.escapedPattern(for: "\(name): from the host") + "$") },
                        dan.transcript)
        XCTAssertFalse((dan.stdout + cid.stdout).contains { $0.contains("not for the history") || $0.contains("for ann only") }, "private lines are never history")

        leave([ann, bob, cid, dan], publisher)
    }

    func testHistoryZeroSendsNone() throws {
        let name = TestLAN.uniqueName("forgetful")
        let publisher = try publish(name, ["--history", "0"])
        let ann = try join(name, as: "ann")
        XCTAssertNotNil(ann.waitForEvent(where: event("joined")), ann.transcript)
        ann.send("said early")
        XCTAssertNotNil(publisher.waitForEvent(where: event("text", ["text": "said early"])), publisher.transcript)
        let bob = try join(name, as: "bob")
        XCTAssertNotNil(bob.waitForEvent(where: event("presence", ["kind": "list"])), bob.transcript)
        ann.send("said later")
        XCTAssertNotNil(bob.waitForEvent(where: event("text", ["text": "said later"])), bob.transcript)
        XCTAssertFalse(bob.jsonEvents.contains { $0["event"] as? String == "history" }, bob.transcript)
        leave([ann, bob], publisher)
    }

    /// Standard output here is a pipe, as a log file would be: svc-publish stamps each line
    /// unless told not to; svc-connect only with --timestamps. Tabs arrive as tabs.
    func testTimestampsByDefaultInALogAndTabsAsTabs() throws {
        let name = TestLAN.uniqueName("logged")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name])
        XCTAssertNotNil(publisher.waitForLine { self.matches($0, Self.timestamp + "registered \"") }, publisher.transcript)
        let plain = try TestLAN.run("svc-publish", on: "a", ["--name", name + " plain", "--no-timestamps"])
        XCTAssertNotNil(plain.waitForLine { $0.hasPrefix("registered \"\(name) plain\"") }, plain.transcript)

        let stamped = try join(name, as: "stamped", ["--timestamps"])
        XCTAssertNotNil(stamped.waitForLine { self.matches($0, Self.timestamp + NSRegularExpression.escapedPattern(for: "* joined as stamped; the room's key is ")) },
                        stamped.transcript)
        let bare = try join(name, as: "bare", [])
        XCTAssertNotNil(bare.waitForLine { $0.hasPrefix("* joined as bare; the room's key is ") }, bare.transcript)
        XCTAssertNotNil(publisher.waitForLine { self.matches($0, Self.timestamp + "joined #2 bare " + Self.keyAndSafetyCode + " from ") }, publisher.transcript)
        bare.send("name\tsize\t\u{1B}[2J")
        XCTAssertNotNil(stamped.waitForLine { self.matches($0, Self.timestamp) && $0.hasSuffix("bare: name\tsize\t\\u{1B}[2J") }, stamped.transcript)
        XCTAssertNotNil(publisher.waitForLine { self.matches($0, Self.timestamp) && $0.hasSuffix("bare: name\tsize\t\\u{1B}[2J") }, publisher.transcript)
        publisher.send("hello\tfrom the host")
        XCTAssertNotNil(publisher.waitForLine { self.matches($0, Self.timestamp) && $0.hasSuffix("\(name): hello\tfrom the host") },
                        "the publisher's own line: " + publisher.transcript)

        leave([stamped, bare], publisher)
        plain.signal(SIGTERM)
        XCTAssertEqual(plain.waitForExit(), 0, plain.transcript)
    }

    /// Three people (three keys: the same key under the same name would replace the first
    /// member's link instead) ask for the same name.
    func testATakenNameIsAnnouncedAsARename() throws {
        let name = TestLAN.uniqueName("names")
        let publisher = try publish(name)
        let ann = try join(name, as: "ann", ["--json", "--identity", keyFile("ann")])
        XCTAssertNotNil(ann.waitForEvent(where: event("joined", ["name": "ann"])), ann.transcript)
        XCTAssertFalse(ann.jsonEvents.contains { $0["event"] as? String == "renamed" }, "no rename without a conflict")
        let second = try join(name, as: "ann", ["--json", "--identity", keyFile("second")])
        XCTAssertNotNil(second.waitForEvent(where: event("renamed", ["requested": "ann", "name": "ann-2"])), second.transcript)
        XCTAssertNotNil(second.jsonEvents.first { $0["event"] as? String == "joined" && $0["name"] as? String == "ann-2" }, second.transcript)
        let third = try join(name, as: "ANN", ["--identity", keyFile("third")])
        XCTAssertNotNil(third.waitForLine { $0 == "* the name ANN is taken in this room; you are ANN-3" }, third.transcript)
        leave([ann, second, third], publisher)
    }

    /// With --json, a program learns everything from stdout: the connection, presence
    /// replies, the server's errors, the connection lost, each reconnect attempt and what was
    /// not sent.
    func testJSONCoversTheConnectionPresenceAndErrors() throws {
        let name = TestLAN.uniqueName("machine")
        let publisher = try publish(name)
        let client = try join(name, as: "robot", ["--json", "--retry-max", "1", "--timeout", "2"])
        let connected = try XCTUnwrap(client.waitForEvent(where: event("connected", ["server": name])), client.transcript)
        XCTAssertTrue(["IPv6", "IPv4"].contains(connected["family"] as? String ?? ""), "\(connected)")
        let addresses = try XCTUnwrap(connected["addresses"] as? [String], "\(connected)")
        XCTAssertTrue(addresses.contains { (connected["address"] as? String ?? "").contains($0) }, "\(connected)")
        XCTAssertNotNil(client.waitForEvent(where: event("joined", ["name": "robot"])), client.transcript)

        client.send("/who")
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "presence" && $0["kind"] as? String == "list"
                                              && $0["names"] as? [String] == [name, "robot"] }, client.transcript)
        client.send("/msg nobody hello?")
        let refusal = try XCTUnwrap(client.waitForEvent(where: event("server-error")), client.transcript)
        XCTAssertTrue((refusal["message"] as? String)?.hasPrefix("unknown-peer: ") == true, "\(refusal)")

        publisher.signal(SIGKILL)
        XCTAssertNotNil(client.waitForEvent(where: event("disconnected")), client.transcript)
        client.send("typed while away")
        XCTAssertNotNil(client.waitForEvent { $0["event"] as? String == "reconnecting" && $0["attempt"] as? Int == 1 && (1...1000).contains($0["delay_ms"] as? Int ?? 0) },
                        client.transcript)
        XCTAssertNotNil(client.waitForEvent(timeout: 20, where: event("reconnect-failed")), client.transcript)
        XCTAssertNotNil(client.waitForEvent(timeout: 20, where: event("not-sent", ["what": "typed while away"])), client.transcript)
        XCTAssertEqual(client.waitForExit(timeout: 20), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("connection lost to \"\(name)\"") }, "stderr keeps the notes for people: " + client.transcript)
    }
}
