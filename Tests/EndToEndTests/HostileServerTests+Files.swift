import Foundation
import XCTest

/// A room that takes a file and then holds it: the sender must give up on its own.
extension HostileServerTests {
    func testARoomThatAcceptsAFileAndNeverReadsItIsLeftAfterTheOutboxBound() throws {
        // It accepts the file at 0, pings every second (the heartbeat is content) and reads
        // nothing: once the sender's outbox has taken nothing for 60 s the connection is
        // closed as stalled (60 to 120 s: the kernel may still take bytes at first), the file
        // reported not delivered, and --no-reconnect exits 74.
        let directory = NSTemporaryDirectory() + "svc-held-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/held.bin"
        // More than the kernel's send buffer (4 MiB at most) and the outbox's 2 MiB together.
        try Data(repeating: 0x5A, count: 16 << 20).write(to: URL(fileURLWithPath: path))
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
}
