import Foundation
import XCTest

/// Service names that draw nothing or hold `\` and `"`: svc-browse shows them escaped, and
/// svc-connect joins the service from the form svc-browse shows.
final class ShownNameTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    func event(_ name: String, _ instance: String? = nil) -> ([String: Any]) -> Bool {
        { $0["event"] as? String == name && (instance == nil || $0["name"] as? String == instance) }
    }

    func testNamesAreShownEscapedAndJoinedInTheFormShown() throws {
        let suffix = UInt16.random(in: 1...9999)
        let zeroWidth = "Living\u{200B} room \(suffix)"
        let plain = "Living room \(suffix)" // what the zero-width one looks like when printed raw
        let literal = "Living\\u{200B} room \(suffix)" // a backslash, then u{200B}, as typed
        let hostile = "bk\\sl.x\"q \(suffix)"
        let forging = "x', 'Living room \(suffix)"
        let names = [zeroWidth, plain, literal, hostile, forging]
        var publishers: [String: ToolProcess] = [:]
        for name in names {
            let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
            XCTAssertEqual(publisher.waitForEvent(where: event("registered"))?["name"] as? String, name, publisher.transcript)
            publishers[name] = publisher
        }
        defer {
            for publisher in publishers.values {
                publisher.signal(SIGTERM)
                _ = publisher.waitForExit()
            }
        }
        XCTAssertNotNil(try TestLAN.run("svc-browse", on: "b", ["--json"]).waitForEvent(where: event("added", forging)))

        // Human output: invisible characters, backslashes and quotes escaped; JSON: exact.
        let text = try TestLAN.run("svc-browse", on: "b", ["--once"])
        XCTAssertEqual(text.waitForExit(), 0, text.transcript)
        let shown = [
            zeroWidth: "\"Living\\u{200B} room \(suffix)\"", plain: "\"Living room \(suffix)\"",
            literal: "\"Living\\\\u{200B} room \(suffix)\"", hostile: "\"bk\\\\sl.x\\\"q \(suffix)\"",
            forging: "\"x', 'Living room \(suffix)\"",
        ]
        for name in names {
            let line = try XCTUnwrap(shown[name])
            XCTAssertTrue(text.stdout.contains { $0.hasPrefix("added \(line) _p2pipp._tcp local. on veth0") }, "\(line)\n" + text.transcript)
        }
        XCTAssertFalse(text.stdout.joined().unicodeScalars.contains("\u{200B}"), text.transcript)
        let json = try TestLAN.run("svc-browse", on: "b", ["--once", "--json"])
        XCTAssertEqual(json.waitForExit(), 0, json.transcript)
        let seen = Set(json.jsonEvents.compactMap { $0["event"] as? String == "added" ? $0["name"] as? String : nil })
        XCTAssertTrue(Set(names).isSubset(of: seen), "seen: \(seen)")

        // svc-connect given what svc-browse showed joins that service, and no other; with and
        // without the quotes. A name that exists exactly as given wins over its reading.
        let joins: [(argument: String, joins: String)] = [
            (shown[zeroWidth]!, zeroWidth),
            (shown[hostile]!, hostile),
            (String(shown[hostile]!.dropFirst().dropLast()), hostile),
            (shown[literal]!, literal),
            (literal, literal), // also reads as the zero-width name: the exact one wins
            (hostile, hostile), // the name as it is still works
        ]
        for (index, join) in joins.enumerated() {
            let message = "hi \(index)"
            let client = try TestLAN.run("svc-connect", on: "b", [join.argument, "--message", message])
            XCTAssertEqual(client.waitForExit(timeout: 15), 0, "\(join.argument)\n" + client.transcript)
            let target = try XCTUnwrap(publishers[join.joins])
            XCTAssertNotNil(target.waitForEvent { $0["event"] as? String == "text" && $0["text"] as? String == message },
                            "\(join.argument) should join \(join.joins)\n" + target.transcript)
            let connected = "connected to \(shown[join.joins] ?? "?") at "
            XCTAssertTrue(client.stderr.contains { $0.contains(connected) }, client.transcript)
            XCTAssertFalse(client.stderr.joined().unicodeScalars.contains("\u{200B}"), "notes show the name escaped: " + client.transcript)
            // The room says its name in HELLO: shown as svc-browse shows it, without the quotes.
            let hello = "hello from " + String(shown[join.joins]!.dropFirst().dropLast())
            XCTAssertEqual(client.stdout.first, hello, client.transcript)
            XCTAssertFalse(client.stdout.joined().unicodeScalars.contains("\u{200B}"), "room output shows the name escaped: " + client.transcript)
            for (name, other) in publishers where name != join.joins {
                XCTAssertFalse(other.jsonEvents.contains { $0["event"] as? String == "text" && $0["text"] as? String == message },
                               "\(join.argument) joined \(name) too")
            }
        }

        // svc-publish's own lines quote its name the same way.
        let human = try TestLAN.run("svc-publish", on: "a", ["--name", hostile + " b"])
        defer {
            human.signal(SIGTERM)
            _ = human.waitForExit()
        }
        XCTAssertNotNil(human.waitForLine { $0.contains("registered \"bk\\\\sl.x\\\"q \(suffix) b\" _p2pipp._tcp local.") }, human.transcript)

        // An unknown name lists the names seen as svc-browse shows them: one cannot pass for two.
        let missing = try TestLAN.run("svc-connect", on: "b", ["nobody \(suffix)", "--timeout", "2"])
        XCTAssertEqual(missing.waitForExit(timeout: 10), 68, missing.transcript)
        let failure = missing.stderr.joined(separator: "\n")
        XCTAssertTrue(failure.contains("services seen: "), failure)
        for name in names { XCTAssertTrue(failure.contains(shown[name]!), "\(shown[name]!)\n" + failure) }
        XCTAssertFalse(failure.unicodeScalars.contains("\u{200B}"), failure)

        // --forget takes the shown form too (without its quotes here), and says which name it
        // forgot as trust messages show it (the form their --forget command suggests). The
        // zero-width name has no pin: known_peers takes no name with an invisible character.
        let forget = try TestLAN.run("svc-connect", on: "b", ["--forget", String(shown[hostile]!.dropFirst().dropLast())])
        XCTAssertEqual(forget.waitForExit(), 0, forget.transcript)
        XCTAssertTrue(forget.stdout.first?.hasPrefix("forgot the key of 'bk\\\\sl.x\\\"q \(suffix)', SHA256:") == true, forget.transcript)
    }
}
