import Foundation
import XCTest

/// svc-browse against a host that misbehaves on purpose (Scripts/mdns-announce on host c):
/// types announced and withdrawn, instances streamed or churned under ever new names.
extension BrowseAllTests {
    /// 64 types announced and withdrawn free their slots: a real type published afterwards is
    /// browsed and listed.
    func testWithdrawnTypesFreeTheirSlotsForALaterType() throws {
        let suffix = UInt32.random(in: 1000...9999)
        let browser = try TestLAN.run("svc-browse", on: "b", ["--all", "--json"])
        XCTAssertNotNil(browser.waitForEvent(timeout: 15) { $0["event"] as? String == "complete" }, browser.transcript)
        let flap = try TestLAN.command(on: "c", [TestLAN.script("mdns-announce"), "flap", "fl\(suffix)", "64"])
        XCTAssertEqual(flap.waitForExit(timeout: 30), 0, flap.transcript)
        XCTAssertNotNil(browser.waitForEvent(timeout: 15) { $0["event"] as? String == "type-removed" && ($0["type"] as? String)?.hasPrefix("_fl\(suffix)") == true },
                        browser.transcript)
        sleep(2) // the other withdrawals (Avahi applies a goodbye after 1 s)
        let real = try TestLAN.command(on: "a", ["avahi-publish", "-s", "Real \(suffix)", "_rl\(suffix)._tcp", "631"])
        XCTAssertNotNil(waitForStderr(real) { $0.hasPrefix("Established under name") }, real.transcript)
        XCTAssertNotNil(browser.waitForEvent(timeout: 15) { $0["event"] as? String == "added" && $0["name"] as? String == "Real \(suffix)" },
                        browser.transcript)
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        real.signal(SIGTERM)
        _ = real.waitForExit()
    }

    /// A host that announces a new instance every 0.1 s cannot hold `--once` open: it ends
    /// at avahi-daemon's "all for now" (as `avahi-browse -t` does) or else within its minimum
    /// wait + 3 s (plus start-up); when the bound comes first (`--once --timeout` sets it), it
    /// says the list may be incomplete.
    func testOnceEndsWithinItsBoundWhileAHostStreamsAnnouncements() throws {
        let suffix = UInt32.random(in: 1000...9999)
        let type = "_st\(suffix)._udp"
        let stream = try TestLAN.command(on: "c", [TestLAN.script("mdns-announce"), "stream", "40", type])
        defer {
            stream.signal(SIGTERM)
            _ = stream.waitForExit()
        }
        let seen = try TestLAN.run("svc-browse", on: "b", ["--type", type])
        XCTAssertNotNil(seen.waitForLine(timeout: 15) { $0.hasPrefix("added") }, "the stream reaches host b: \(seen.transcript)")
        seen.signal(SIGINT)
        _ = seen.waitForExit()
        for (arguments, bound) in [(["--type", type, "--once"], 0.35 + 3), (["--all", "--once"], 0.7 + 3)] {
            let start = Date()
            let browser = try TestLAN.run("svc-browse", on: "b", arguments)
            XCTAssertEqual(browser.waitForExit(timeout: 30), 0, browser.transcript)
            let took = Date().timeIntervalSince(start)
            XCTAssertLessThan(took, bound + 2.5, "\(arguments) took \(took) s: \(browser.transcript)")
            XCTAssertNotNil(browser.stdout.first { $0.hasPrefix("added") }, browser.transcript)
        }
        // A type host b has never browsed, and a bound shorter than both the quiet period's
        // minimum wait and the daemon's first query window: the daemon has not said "all for
        // now" when the bound comes.
        let fresh = "_su\(suffix)._udp"
        let freshStream = try TestLAN.command(on: "c", [TestLAN.script("mdns-announce"), "stream", "40", fresh])
        defer {
            freshStream.signal(SIGTERM)
            _ = freshStream.waitForExit()
        }
        let start = Date()
        let browser = try TestLAN.run("svc-browse", on: "b", ["--type", fresh, "--once", "--timeout", "0.2"])
        XCTAssertEqual(browser.waitForExit(timeout: 30), 0, browser.transcript)
        let took = Date().timeIntervalSince(start)
        XCTAssertLessThan(took, 0.2 + 2.5, "took \(took) s: \(browser.transcript)")
        XCTAssertNotNil(browser.stderr.first { $0.contains("stopped waiting for the first batch after") }, browser.transcript)
    }

    /// Instances announced and withdrawn under ever new names leave nothing behind: after
    /// the first thousand names, a few thousand more grow svc-browse's memory by less than
    /// they would at the 6.5 KB each they once cost.
    func testChurnedNamesDoNotMakeMemoryGrow() throws {
        let suffix = UInt32.random(in: 1000...9999)
        let type = "_ch\(suffix)._tcp"
        let browser = try TestLAN.run("svc-browse", on: "b", ["--type", type])
        XCTAssertNil(browser.exitStatus(within: 1), browser.transcript)
        let churn = try TestLAN.command(on: "c", [TestLAN.script("mdns-announce"), "churn", "24", type, "20"])
        XCTAssertNotNil(browser.waitForLine(timeout: 15) { $0.hasPrefix("removed") }, browser.transcript)
        sleep(5)
        let early = try XCTUnwrap(residentKilobytes(of: browser), browser.transcript)
        XCTAssertEqual(churn.waitForExit(timeout: 60), 0, churn.transcript)
        sleep(2)
        let late = try XCTUnwrap(residentKilobytes(of: browser), browser.transcript)
        let removed = browser.stdout.count { $0.hasPrefix("removed") }
        XCTAssertGreaterThan(removed, 2000, "the churn reached svc-browse: \(churn.transcript)")
        XCTAssertLessThan(late - early, 6 * 1024, "RSS grew from \(early) kB to \(late) kB over \(removed) removed names")
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
    }

    /// VmRSS of a running tool, read from /proc (Scripts/lan execs the tool in place).
    func residentKilobytes(of tool: ToolProcess) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(tool.process.processIdentifier)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first }
            .flatMap { Int($0) }
    }
}
