import Foundation
import XCTest

/// A room that takes a file and then holds it: the sender must give up on its own.
extension HostileServerTests {
    func testARoomThatAcceptsAFileAndNeverReadsItIsLeftAfterTheOutboxBound() throws {
        // It accepts the file at 0, pings every second (the heartbeat is content) and reads
        // nothing: once the sender's outbox has taken nothing for 60 s the connection is
        // closed as stalled (60 to 120 s: the kernel may still take bytes at first), the file
        // reported not delivered, and --no-reconnect exits 74.
        // More than the kernel's send buffer (4 MiB at most) and the outbox's 2 MiB together.
        let (path, directory) = try fileOfRepeatedBytes(named: "held.bin", byte: 0x5A, count: 16 << 20)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, name) = try hostileServer("accept-never-read", lifetime: 240)
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--send", path, "--no-reconnect",
                                                             "--timeout", "5", "--heartbeat", "2"])
        XCTAssertEqual(client.waitForExit(timeout: 200), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.contains("held.bin was not delivered: the other end read nothing of the data waiting to be sent for 60 s")
                                               && $0.hasSuffix("send it again to resume") }, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("1 item was not delivered") }, client.transcript)
        let report = try XCTUnwrap(server.waitForLine(timeout: 30) { $0.hasPrefix("{\"connection\"") }, server.transcript)
        XCTAssertTrue(report.contains("\"client_closed\": true"), server.transcript)
        _ = server.waitForExit(timeout: 10)
    }

    func testARoomThatTricklesCreditInSmallStepsIsGivenUpOnAfterTheCreditBound() throws {
        // It accepts a file for bob, grants 64 KiB of credit, then 1 KiB every 5 s, reading
        // all the data. The small grants are used but do not start the sender's 150 s wait for
        // credit again (FileTransfers.creditStep): svc-connect gives up 150 s after it ran out
        // of the first grant, having sent more than it, and exits 74 (it was held for good).
        let (path, directory) = try fileOfRepeatedBytes(named: "trickled.bin", byte: 0x54, count: 4 << 20)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, name) = try hostileServer("credit-trickle", lifetime: 300)
        let started = Date()
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--no-reconnect", "--timeout", "5", "--heartbeat", "2"])
        client.send("/send bob \(path)")
        client.closeStdin() // input ends: svc-connect leaves once the file is done with
        XCTAssertEqual(client.waitForExit(timeout: 240), 74, client.transcript)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 150, "the bound is 150 s from the end of the first grant: " + client.transcript)
        let prefix = "the room let no more of \(path) go to bob for 150 s (no FILE_CREDIT after "
        let line = try XCTUnwrap(client.stderr.first { $0.contains(prefix) }, client.transcript)
        let sent = line.components(separatedBy: prefix).last?.components(separatedBy: " ").first.flatMap { Int($0) }
        XCTAssertGreaterThan(try XCTUnwrap(sent, line), 64 << 10, "the 1 KiB grants were used: " + line)
        XCTAssertTrue(line.contains("of its \(4 << 20) bytes)") && line.hasSuffix("send it again to resume, or ask the room's publisher"), line)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("1 item was not delivered") }, client.transcript)
        let report = try XCTUnwrap(server.waitForLine(timeout: 30) { $0.hasPrefix("{\"connection\"") }, server.transcript)
        XCTAssertTrue(report.contains("FILE_CANCEL from the client: no FILE_CREDIT came within 150 s after \(sent ?? 0) of the \(4 << 20) bytes"), report)
        _ = server.waitForExit(timeout: 10)
    }

    func testAReceiverWithoutResumeTagsThatSaysStoredBeforeTheFileEndsBreaksTheProtocol() throws {
        // The room takes files but not streamed ones (no resume tags): it accepts the file at 0
        // and says "stored" on its first chunk, long before the rest of 32 MiB and FILE_END can
        // have been sent. That is ERROR file-protocol, and the file is not delivered (74).
        let (path, directory) = try fileOfRepeatedBytes(named: "early.bin", byte: 0x45, count: 32 << 20)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, name) = try hostileServer("stored-early")
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--allow-plaintext", "--send", path, "--no-reconnect", "--timeout", "5"])
        XCTAssertEqual(client.waitForExit(timeout: 60), 74, client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("error: the receiver claimed to have stored \(path) before it was sent; it was not delivered") },
                      client.transcript)
        XCTAssertTrue(client.stderr.contains { $0.hasSuffix("1 item was not delivered") }, client.transcript)
        let report = try XCTUnwrap(server.waitForLine(timeout: 30) { $0.hasPrefix("{\"connection\"") }, server.transcript)
        XCTAssertTrue(report.contains("\"client_errors\": [12]"), "ERROR file-protocol: " + report)
        XCTAssertFalse(report.contains("FILE_END from the client"), report)
        _ = server.waitForExit(timeout: 10)
    }

    /// A file of `count` copies of `byte` in a directory of its own; the caller removes the
    /// directory.
    private func fileOfRepeatedBytes(named name: String, byte: UInt8, count: Int) throws -> (path: String, directory: String) {
        let directory = NSTemporaryDirectory() + "svc-files-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        try Data(repeating: byte, count: count).write(to: URL(fileURLWithPath: path))
        return (path, directory)
    }
}
