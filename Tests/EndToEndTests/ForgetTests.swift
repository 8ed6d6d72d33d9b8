import Foundation
import XCTest

/// `svc-connect --forget NAME`: removes a pin from known_peers, with no network at all (the
/// tool runs with an unreachable D-Bus, and on no virtual LAN).
final class ForgetTests: XCTestCase {
    var config = ""
    var knownPeers: String { config + "/svc/known_peers" }
    let keyA = "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"
    let keyB = "SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o"

    override func setUpWithError() throws {
        config = NSTemporaryDirectory() + "svc-forget-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: config + "/svc", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: config)
    }

    func forget(_ arguments: [String]) throws -> ToolProcess {
        let environment = ["XDG_CONFIG_HOME": config, "HOME": "/nonexistent", "PATH": "/usr/bin:/bin",
                           "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"]
        return try ToolProcess(TestLAN.tool("svc-connect"), ["--forget"] + arguments, environment: environment)
    }

    func contents() throws -> String { try String(contentsOfFile: knownPeers, encoding: .utf8) }

    func testForgetRemovesThePinAndSaysWhichLine() throws {
        let file = """
            # rooms I trust
            Kitchen._p2pipp._tcp.local. \(keyB)

            Living\\032room._p2pipp._tcp.local. \(keyA)
            this line is not a pin
            Attic._p2pipp._tcp.local. \(keyB)

            """
        try file.write(toFile: knownPeers, atomically: false, encoding: .utf8)
        let tool = try forget(["Living room"])
        XCTAssertEqual(tool.waitForExit(), 0, tool.transcript)
        XCTAssertEqual(tool.stdout, ["forgot the key of 'Living room', \(keyA), line 4 of '\(knownPeers)'"], tool.transcript)
        XCTAssertEqual(tool.stderr, ["svc-connect: '\(knownPeers)' line 5: skipped: expected '<service> <key>', two fields (and perhaps a # comment), not 6"], tool.transcript)
        XCTAssertEqual(try contents(), """
            # rooms I trust
            Kitchen._p2pipp._tcp.local. \(keyB)

            this line is not a pin
            Attic._p2pipp._tcp.local. \(keyB)

            """, "only that line is gone; comments, blank and unread lines stay")
        let mode = try FileManager.default.attributesOfItem(atPath: knownPeers)[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o600)

        let again = try forget(["Living room"])
        XCTAssertEqual(again.waitForExit(), 0, again.transcript)
        XCTAssertEqual(again.stdout, [], again.transcript)
        XCTAssertEqual(again.stderr.last, "svc-connect: no pin for 'Living room' (Living\\032room._p2pipp._tcp.local.) in '\(knownPeers)'; nothing changed")
    }

    func testTheServiceTypeAndDomainArePartOfTheName() throws {
        try "Attic._other._tcp.local. \(keyA)\nAttic._p2pipp._tcp.local. \(keyB)\n".write(toFile: knownPeers, atomically: false, encoding: .utf8)
        let tool = try forget(["attic", "--type", "_other._tcp", "--domain", "local"])
        XCTAssertEqual(tool.waitForExit(), 0, tool.transcript)
        XCTAssertEqual(tool.stdout, ["forgot the key of 'attic', \(keyA), line 1 of '\(knownPeers)'"], "names compare without ASCII case")
        XCTAssertEqual(try contents(), "Attic._p2pipp._tcp.local. \(keyB)\n")
    }

    func testNoFileIsNoPin() throws {
        let tool = try forget(["Nowhere"])
        XCTAssertEqual(tool.waitForExit(), 0, tool.transcript)
        XCTAssertEqual(tool.stderr, ["svc-connect: no pin for 'Nowhere' (Nowhere._p2pipp._tcp.local.) in '\(knownPeers)'; nothing changed"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: knownPeers), "nothing written")
    }

    func testAnUnusableKnownPeersIs78() throws {
        try FileManager.default.createDirectory(atPath: knownPeers, withIntermediateDirectories: false)
        let tool = try forget(["Living room"])
        XCTAssertEqual(tool.waitForExit(), 78, tool.transcript)
        XCTAssertEqual(tool.stderr, ["svc-connect: error: known_peers cannot be used: '\(knownPeers)' is not a regular file; move it away to start with no pins"])
    }

    func testForgetTakesNoOptionThatActsOnTheRoom() throws {
        for extra in [["--send", "/etc/hostname"], ["--message", "hi"], ["--fingerprint", "ungWv48Bz+pB"], ["--strict"], ["--allow-plaintext"]] {
            let tool = try forget(["Living room"] + extra)
            XCTAssertEqual(tool.waitForExit(), 64, tool.transcript)
            XCTAssertEqual(tool.stderr.first, "Error: --forget only removes a pin from known_peers; it cannot go with \(extra[0])")
        }
    }
}
