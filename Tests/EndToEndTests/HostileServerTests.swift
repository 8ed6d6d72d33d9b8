import Foundation
import XCTest

/// svc-connect against a spoofed publisher (Scripts/hostile-server) on the virtual LAN: what
/// the server says reaches the terminal escaped, and a line it never confirmed is reported.
final class HostileServerTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// Starts hostile-server in `mode` on host a, published under a fresh name; returns it
    /// and the name once the name is established.
    func hostileServer(_ mode: String, connections: Int = 1, lifetime: Int = 60) throws -> (ToolProcess, name: String) {
        let name = TestLAN.uniqueName("evil-\(mode)")
        let server = try TestLAN.command(on: "a", ["/usr/bin/python3", TestLAN.script("hostile-server"), "--publish", name,
                                                   "--lifetime", "\(lifetime)", "--connections", "\(connections)", mode])
        XCTAssertNotNil(server.waitForLine(timeout: 20) { $0.hasPrefix("{\"published\"") }, server.transcript)
        return (server, name)
    }

    /// Lines that carry what TerminalSafe escapes: C0 (but tab), DEL, C1, bidi controls and
    /// the line and paragraph separators.
    func rawControls(_ lines: [String]) -> [String] {
        lines.filter { line in
            line.unicodeScalars.contains { scalar in
                switch scalar.value {
                case 0x09: false
                case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
                default: false
                }
            }
        }
    }

    func testWhatTheServerSaysInErrorsAndGoodbyesIsPrintedEscaped() throws {
        // The mode, and the exit code: refused (76), or the connection broke / the line was not confirmed (74).
        for (mode, code) in [("refuse-controls", Int32(76)), ("error-controls", 74), ("goodbye-controls", 74)] {
            let (server, name) = try hostileServer(mode)
            let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--no-reconnect", "--timeout", "5"])
            XCTAssertEqual(client.waitForExit(timeout: 30), code, "\(mode): " + client.transcript)
            let lines = client.stdout + client.stderr
            XCTAssertEqual(rawControls(lines), [], "\(mode): " + client.transcript)
            XCTAssertTrue(lines.contains { $0.contains("\\u{1B}[31mred") && $0.contains("\\u{202E}evil") }, "\(mode): " + client.transcript)
            _ = server.waitForExit(timeout: 10)
        }
    }

    func testALineTheServerNeverConfirmedIsReportedAsNotSent() throws {
        // The server cuts the connection after the TEXT (half a frame, then EOF), or says
        // GOODBYE before acknowledging it: either way the line was never confirmed.
        for mode in ["mid-frame-eof", "goodbye-controls"] {
            let (server, name) = try hostileServer(mode)
            let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--no-reconnect", "--timeout", "5"])
            XCTAssertEqual(client.waitForExit(timeout: 30), 74, "\(mode): " + client.transcript)
            XCTAssertTrue(client.stderr.contains { $0.contains("not sent: hi") }, "\(mode): " + client.transcript)
            XCTAssertTrue(client.stderr.contains { $0.contains("1 item was not delivered") }, "\(mode): " + client.transcript)
            _ = server.waitForExit(timeout: 10)
        }
    }

    func testAOneShotMessageDoesNotWaitForARoomThatSaidGoodbye() throws {
        // Without --no-reconnect: only interactive members wait for a closed room.
        let (server, name) = try hostileServer("goodbye-controls")
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--timeout", "5"])
        XCTAssertEqual(client.waitForExit(timeout: 30), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("not sent: hi") }, client.transcript)
        XCTAssertFalse(client.stderr.contains { $0.contains("waiting for it to come back") }, client.transcript)
        _ = server.waitForExit(timeout: 10)
    }

    func testAServerThatIsAliveButNeverConfirmsIsGivenUpOn() throws {
        // It pings every second, so the heartbeat is satisfied, and never sends ACK: the
        // confirmation timeout (4 heartbeat intervals, 8 s here) ends the wait.
        let (server, name) = try hostileServer("never-ack")
        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--no-reconnect", "--timeout", "5", "--heartbeat", "2"])
        XCTAssertEqual(client.waitForExit(timeout: 30), 74, client.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("not sent: hi (sent, but the server never confirmed it)") }, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("confirmed none of the text sent for 8 s") }, client.transcript)
        _ = server.waitForExit(timeout: 10)
    }

    func testAServerThatNeverConfirmsWhileInputWaitsIsReconnectedToAndGivenUpOn() throws {
        // Input does not end: 1100 lines of 1000 bytes, more than the 1 MiB window, so a send
        // waits for an ACK that never comes. After 4 heartbeat intervals (4 s) the connection
        // is handled as lost: reconnect, the unconfirmed lines sent again, and after the two
        // attempts --retry-max 2 allows, exit 74 saying the room acknowledged nothing.
        let client = try giveUpOnAStallingServer("never-ack", because: "the room acknowledged none of the text sent for 4 s while more waited to be sent")
        XCTAssertTrue(client.stderr.contains { $0.contains("(sent, but the server never confirmed it)") }, client.transcript)
    }

    func testAServerThatAcknowledgesLinesItNeverReadIsGivenUpOn() throws {
        // Review attacks18, N2: after the first TEXT the room reads nothing, but acknowledges one
        // line further every 0.5 s (lines its end took, never read). While anything queued has
        // not been taken by its end that is not progress: each connection is given up on within
        // 4 to 8 s (--heartbeat 1) as one that reads nothing, and after 2 attempts, exit 74.
        _ = try giveUpOnAStallingServer("ack-unread", because: "the room acknowledged lines but read none of the text waiting to be sent for 4 s")
    }

    /// Sends 1100 lines of 1000 bytes (more than the 1 MiB window; input does not end) to a
    /// hostile server in `mode` with --heartbeat 1 --retry-max 2, and checks that each of the 3
    /// connections is given up on `because`, and the client exits 74 after the second attempt.
    private func giveUpOnAStallingServer(_ mode: String, because reason: String) throws -> ToolProcess {
        let (server, name) = try hostileServer(mode, connections: 3)
        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--retry-max", "2", "--timeout", "5", "--heartbeat", "1"])
        let line = String(repeating: "x", count: 1000)
        for _ in 0..<1100 { client.send(line) }
        XCTAssertEqual(client.waitForExit(timeout: 60), 74, client.transcript)
        client.closeStdin()
        XCTAssertLessThan(Date().timeIntervalSince(started), 45, client.transcript)
        XCTAssertEqual(client.stderr.filter { $0.contains("connection lost") && $0.hasSuffix(reason) }.count, 3, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("gave up reconnecting after 2 attempts") && $0.hasSuffix("the last connection was closed because " + reason) },
                      client.transcript)
        // It exits once it has reported its 3 connections (a signal could cut the last report).
        _ = server.waitForExit(timeout: 15)
        XCTAssertEqual(server.stdout.filter { $0.hasPrefix("{\"connection\"") }.count, 3, server.transcript)
        return client
    }

    func testAServerThatFloodsAndNeverReadsIsLeftRatherThanBufferedFor() throws {
        // It sends PINGs as fast as TCP takes them and never reads the PONGs: the client's
        // outbox bound (4 MiB) or its heartbeat ends the connection, never a hang.
        let (server, name) = try hostileServer("never-read")
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--no-reconnect", "--timeout", "5", "--heartbeat", "2"])
        XCTAssertEqual(client.waitForExit(timeout: 30), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("broke") }, client.transcript)
        _ = server.waitForExit(timeout: 10)
    }

    func testAServerThatWelcomesAndDropsAtOnceIsGivenUpOnAfterTheAttempts() throws {
        // Each connection is let in and closed at once. --retry-max 4 allows 3 attempts (1, 2,
        // 4 s); a welcome does not start them over (only 30 s connected does), so after the
        // first connection and 3 reconnects the client gives up instead of flapping forever.
        let (server, name) = try hostileServer("welcome-drop", connections: 10)
        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--message", "hi", "--retry-max", "4", "--timeout", "5"])
        XCTAssertEqual(client.waitForExit(timeout: 60), 74, client.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, client.transcript)
        let attempts = client.stderr.filter { $0.contains("reconnecting in") }
        XCTAssertEqual(attempts.map { $0.components(separatedBy: "attempt ").last ?? "" }, ["1", "2", "3"], client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("gave up reconnecting after 3 attempts") }, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("not sent: hi") }, client.transcript)
        server.signal(SIGTERM)
        _ = server.waitForExit(timeout: 10)
        XCTAssertEqual(server.stdout.filter { $0.hasPrefix("{\"connection\"") }.count, 4, server.transcript)
    }
}
