import Foundation
import XCTest

/// Progress like pv on both sides of a transfer: a bar on a terminal (the tool runs under
/// script(1)'s pseudo-terminal, whose output is what the user's screen receives), throttled
/// `file-progress` events with `--json`, and nothing of either on a pipe without `--json`.
extension FileTransferTests {
    /// Runs a tool on a virtual host with a pseudo-terminal `columns` wide as its stdin,
    /// stdout and stderr; the returned process's stdout is everything written to the terminal.
    func onTerminal(_ tool: String, on host: String, columns: Int, _ arguments: [String]) throws -> ToolProcess {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = "stty cols \(columns) rows 24 && exec " + ([TestLAN.tool(tool)] + arguments).map(quoted).joined(separator: " ")
        return try TestLAN.command(on: host, ["script", "--quiet", "--return", "--command", command, "/dev/null"])
    }

    /// The status lines drawn on a terminal: each ends in "erase to the end of the line".
    func statusLines(_ screen: String) -> [String] {
        screen.components(separatedBy: "\u{1B}[K").dropLast().compactMap { piece in
            let text = piece.split(omittingEmptySubsequences: false) { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }.last.map(String.init) ?? ""
            return text.contains("%") ? text : nil
        }
    }

    /// Checks what a terminal received during a transfer: a bar for `label` redrawn with rate
    /// and ETA, fitting `columns`, erased before `line` was printed and drawn again after it,
    /// and gone once `outcome` was printed.
    func checkBar(_ screen: String, label: String, columns: Int, line: String, outcome: String,
                  file: StaticString = #filePath, lineNumber: UInt = #line) throws {
        let bars = statusLines(screen)
        XCTAssertGreaterThanOrEqual(Set(bars).count, 5, "the bar is redrawn as data moves: \(bars)", file: file, line: lineNumber)
        XCTAssertTrue(bars.allSatisfy { $0.hasPrefix(label) }, "\(bars)", file: file, line: lineNumber)
        XCTAssertTrue(bars.allSatisfy { $0.count < columns }, "every bar fits: \(bars.filter { $0.count >= columns })", file: file, line: lineNumber)
        XCTAssertTrue(bars.contains { $0.contains(" MiB/s") && $0.contains("ETA 0:0") && $0.contains(" MiB/100.0 MiB") }, "\(bars)",
                      file: file, line: lineNumber)

        // The room's line: the bar is erased first, the line printed, the bar drawn again.
        let printed = try XCTUnwrap(screen.range(of: line), screen, file: file, line: lineNumber)
        let before = screen[..<printed.lowerBound]
        let erased = try XCTUnwrap(before.range(of: "\r\u{1B}[K", options: .backwards), "the bar was not erased", file: file, line: lineNumber)
        XCTAssertFalse(before[erased.upperBound...].contains("%") || before[erased.upperBound...].contains("\n"),
                       "the line starts on a clean row: \(before[erased.upperBound...].debugDescription)", file: file, line: lineNumber)
        let after = screen[printed.upperBound...]
        let nextLine = try XCTUnwrap(after.range(of: "\n"), file: file, line: lineNumber)
        XCTAssertNotNil(statusLines(String(after[nextLine.upperBound...])).first, "the bar comes back below the line", file: file, line: lineNumber)

        // Done: the outcome is printed where the bar was, and no bar is drawn after it.
        let ended = try XCTUnwrap(screen.range(of: outcome, options: .backwards), screen, file: file, line: lineNumber)
        XCTAssertTrue(statusLines(String(screen[ended.upperBound...])).isEmpty, "no bar after the outcome", file: file, line: lineNumber)
    }

    func testOnATerminalBothSidesShowABarWithRateAndETAAndRoomLinesLandAboveIt() throws {
        let (path, _) = try randomFile(megabytes: 100)
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("progress")
        let liftShaping = try shapeHostB() // 100 MB take about 4 s
        defer { liftShaping() }
        let publisher = try onTerminal("svc-publish", on: "a", columns: 90, ["--name", name, "--inbox", inbox])
        XCTAssertNotNil(publisher.waitForLine { $0.contains("registered \"\(name)\"") }, publisher.transcript)
        let sender = try onTerminal("svc-connect", on: "b", columns: 72, [name, "--send", path, "--as", "pat"])
        XCTAssertNotNil(publisher.waitForLine(timeout: 20) { $0.contains("receiving \"payload.bin\"") }, publisher.transcript)
        usleep(1_500_000)
        let carol = try TestLAN.run("svc-connect", on: "b", [name, "--as", "carol", "--message", "a line from the room"])
        XCTAssertEqual(carol.waitForExit(), 0, carol.transcript)
        XCTAssertEqual(sender.waitForExit(timeout: 120), 0, sender.transcript)
        XCTAssertNotNil(publisher.waitForLine { $0.contains("stored \"payload.bin\"") }, publisher.transcript)
        usleep(200_000)

        let sent = sender.stdout.joined(separator: "\n")
        XCTAssertTrue(sent.contains("sending \"\(path)\" to \(name) (\(100 << 20) bytes)"), sent)
        try checkBar(sent, label: "payload.bin to ", columns: 72, line: "carol: a line from the room", outcome: "sent \"\(path)\"")
        XCTAssertTrue(statusLines(sent).contains { $0.contains("100%") }, "the sender shows 100% while the receiver verifies")
        try checkBar(publisher.stdout.joined(separator: "\n"), label: "payload.bin from pat", columns: 90,
                     line: "carol: a line from the room", outcome: "stored \"payload.bin\"")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }

    func testWithJSONBothSidesReportProgressAtMostOnceASecondAndNoBar() throws {
        let (path, _) = try randomFile(megabytes: 100)
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("progress-json")
        let liftShaping = try shapeHostB()
        defer { liftShaping() }
        let publisher = try publish(name, inbox: inbox)
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json", "--as", "pat"])
        XCTAssertEqual(sender.waitForExit(timeout: 120), 0, sender.transcript)
        XCTAssertNotNil(publisher.waitForEvent(timeout: 10) { $0["event"] as? String == "file-stored" }, publisher.transcript)

        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (tool, direction, peer) in [(sender, "send", "to"), (publisher, "receive", "from")] {
            let events = tool.jsonEvents.filter { $0["event"] as? String == "file-progress" }
            XCTAssertGreaterThanOrEqual(events.count, 3, "several events for a transfer of about 4 s: \(tool.transcript)")
            XCTAssertTrue(events.allSatisfy { $0["direction"] as? String == direction && $0["size"] as? Int == 100 << 20 }, "\(events)")
            XCTAssertEqual(events.compactMap { $0[peer] as? String }.count, events.count, "each names its peer as \(peer)")
            let bytes = events.compactMap { $0["bytes"] as? Int }
            XCTAssertEqual(bytes, bytes.sorted(), direction)
            XCTAssertEqual(bytes.last, 100 << 20, direction)
            XCTAssertEqual(events.last?["percent"] as? Int, 100)
            XCTAssertEqual(events.last?["eta_seconds"] as? Int, 0)
            XCTAssertTrue(events.dropFirst().allSatisfy { ($0["bytes_per_second"] as? Int ?? 0) > 0 }, "\(events)")
            XCTAssertTrue(events.allSatisfy { $0["resumed_from"] as? Int == 0 && $0["elapsed_ms"] is Int && $0["name"] is String })
            let times = events.compactMap { ($0["time"] as? String).flatMap(dates.date(from:)) }
            XCTAssertEqual(times.count, events.count)
            // At most one a second, except the last one, which always comes.
            for (earlier, later) in zip(times.dropLast(), times.dropLast().dropFirst()) {
                XCTAssertGreaterThanOrEqual(later.timeIntervalSince(earlier), 0.95, "\(events)")
            }
            XCTAssertFalse(tool.stderr.joined().contains("\r") || tool.stderr.joined().contains("ETA"), "no bar on a pipe: \(tool.transcript)")
        }
        let sending = try XCTUnwrap(sender.jsonEvents.first { $0["event"] as? String == "file-sending" }, sender.transcript)
        XCTAssertEqual(sending["path"] as? String, path)
        XCTAssertEqual(sending["resumed_from"] as? Int, 0)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testOnATerminalAStalledLinkSaysSoAndAReconnectSaysWhereItResumes() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let tag = try resumeTag(of: path) // svc-connect streams: its partial data is named by the tag
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("progress-stall")
        let liftShaping = try shapeHostB()
        defer { liftShaping() }
        let first = try publish(name, inbox: inbox)
        let sender = try onTerminal("svc-connect", on: "b", columns: 100, [name, "--send", path])
        XCTAssertGreaterThanOrEqual(waitForPartial(inbox, named: tag, atLeast: 30 << 20), 30 << 20, sender.transcript)
        first.signal(SIGSTOP) // the link stays up, but no byte moves
        sleep(8)
        first.signal(SIGCONT)
        XCTAssertGreaterThanOrEqual(waitForPartial(inbox, named: tag, atLeast: 80 << 20), 80 << 20, sender.transcript)
        first.signal(SIGKILL)
        _ = first.waitForExit()
        sleep(2)
        let kept = partialSize(inbox, named: tag)
        let second = try publish(name, inbox: inbox)
        XCTAssertEqual(sender.waitForExit(timeout: 120), 0, sender.transcript + second.transcript)
        let screen = sender.stdout.joined(separator: "\n")
        let bars = statusLines(screen)
        XCTAssertTrue(bars.contains { $0.contains("stalled 0:0") }, "a bar without progress for 5 s says stalled: \(bars)")
        XCTAssertTrue(bars.contains { $0.contains("reconnecting") }, "\(bars)")
        XCTAssertTrue(screen.contains("reconnecting in"), screen)
        XCTAssertTrue(screen.contains("sending \"\(path)\" to \(name) (\(200 << 20) bytes, resuming at \(kept))"), "\(kept) bytes kept: \(screen)")
        let receiving = try XCTUnwrap(second.waitForEvent { $0["event"] as? String == "file-receiving" }, second.transcript)
        XCTAssertEqual(receiving["resumed_from"] as? Int, kept)
        // The resumed file, verified as a whole, is the one that was sent.
        let stored = try XCTUnwrap(inboxFiles(inbox).first, second.transcript)
        XCTAssertEqual(try sha256(of: inbox + "/" + stored), digest)
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }
}
