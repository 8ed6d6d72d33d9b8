import Foundation
import XCTest

/// `svc-browse --once` through the real daemons: it lists every instance on the other hosts
/// and ends at avahi-daemon's own "all for now" when the daemon already browses the type
/// (warm), or by its quiet period before that signal when it does not (cold).
final class OnceAllForNowTests: XCTestCase {
    override func setUpWithError() throws { try TestLAN.require() }

    /// A service type no daemon on the LAN has browsed yet.
    func freshType() -> String { "_once\(UInt16.random(in: 1000...9999))._tcp" }

    /// Publishes `count` rooms of `type` on `host`; the last one is published just before the
    /// browse: only its registration is awaited, not its announcements.
    func publish(_ names: [String], type: String, on host: String, lan: String = TestLAN.main) throws -> [ToolProcess] {
        let publishers = try names.map { try TestLAN.run("svc-publish", on: host, lan: lan, ["--name", $0, "--type", type, "--json"]) }
        for publisher in publishers {
            XCTAssertNotNil(publisher.waitForEvent(timeout: 20) { $0["event"] as? String == "registered" }, publisher.transcript)
        }
        return publishers
    }

    /// Runs `svc-browse --once --json --type TYPE` on host b; returns the listed names, the
    /// last event and the wall time the host measured (without Scripts/lan's own start-up).
    func once(_ type: String, lan: String = TestLAN.main) throws -> (names: Set<String>, last: String?, seconds: Double, transcript: String) {
        let script = #"s=$(date +%s%N); "$0" --once --json --type "$1"; status=$?; echo "{\"elapsed_ns\":$(( $(date +%s%N) - s ))}"; exit $status"#
        let browser = try TestLAN.command(on: "b", lan: lan, ["sh", "-c", script, TestLAN.tool("svc-browse"), type])
        XCTAssertEqual(browser.waitForExit(), 0, browser.transcript)
        let events = browser.jsonEvents
        let names = Set(events.compactMap { $0["event"] as? String == "added" ? $0["name"] as? String : nil })
        let last = events.last { $0["event"] != nil }?["event"] as? String
        let nanoseconds = events.compactMap { $0["elapsed_ns"] as? Int }.last ?? Int.max
        return (names, last, Double(nanoseconds) / 1e9, browser.transcript)
    }

    func testWarmOnceListsEveryInstanceAndEndsAtTheDaemonsAllForNow() throws {
        let type = freshType()
        let base = "warm\(UInt16.random(in: 1000...9999))" // no space: avahi-browse -p escapes it
        let onA = (1...3).map { "\(base)-a\($0)" }, onC = (1...2).map { "\(base)-c\($0)" }
        let publishers = try publish(onA, type: type, on: "a") + publish(onC, type: type, on: "c")
        defer { publishers.forEach { $0.signal(SIGTERM) }; publishers.forEach { _ = $0.waitForExit() } }
        // Someone else browses the type on b, so its daemon has a query running and caches.
        let other = try TestLAN.command(on: "b", ["avahi-browse", "-p", type])
        defer { other.signal(SIGTERM); _ = other.waitForExit() }
        XCTAssertNotNil(other.waitForLine(timeout: 10) { $0.contains(onC[1]) }, other.transcript)
        let late = "\(base)-late"
        let latePublisher = try publish([late], type: type, on: "c")
        defer { latePublisher.forEach { $0.signal(SIGTERM); _ = $0.waitForExit() } }
        XCTAssertNotNil(other.waitForLine(timeout: 10) { $0.contains(late) }, "the daemon on b saw the late room: " + other.transcript)

        let listing = try once(type)
        XCTAssertEqual(Set(onA + onC + [late]).subtracting(listing.names), [], "missing from the listing: " + listing.transcript)
        XCTAssertEqual(listing.last, "complete", listing.transcript)
        // The quiet period could not have ended it before its 350 ms minimum wait.
        XCTAssertLessThan(listing.seconds, 0.35, "ended by the daemon's all-for-now, not the quiet period: " + listing.transcript)
    }

    func testColdOnceListsEveryInstanceIncludingOnePublishedJustBefore() throws {
        let type = freshType()
        let base = "cold\(UInt16.random(in: 1000...9999))"
        let publishers = try publish((1...3).map { "\(base)-a\($0)" }, type: type, on: "a")
            + publish(["\(base)-c1", "\(base)-late"], type: type, on: "c")
        defer { publishers.forEach { $0.signal(SIGTERM) }; publishers.forEach { _ = $0.waitForExit() } }
        // No daemon has browsed the type: nothing is cached on b, its first query must be answered.
        let listing = try once(type)
        let names = (1...3).map { "\(base)-a\($0)" } + ["\(base)-c1", "\(base)-late"]
        XCTAssertEqual(Set(names).subtracting(listing.names), [], "missing from the listing: " + listing.transcript)
        XCTAssertEqual(listing.last, "complete", listing.transcript)
        // Avahi says all-for-now one second after its first query; the quiet period ends it first.
        XCTAssertGreaterThanOrEqual(listing.seconds, 0.35, listing.transcript)
        XCTAssertLessThan(listing.seconds, 1.0, "ended by the quiet period, before the daemon's signal: " + listing.transcript)
    }

    func testWarmOnceOnAnIPv6OnlyLANEndsAtTheDaemonsAllForNow() throws {
        let type = freshType()
        let names = (1...2).map { "v6warm\(UInt16.random(in: 1000...9999))-\($0)" }
        let publishers = try publish(names, type: type, on: "a", lan: TestLAN.ipv6Only)
        defer { publishers.forEach { $0.signal(SIGTERM) }; publishers.forEach { _ = $0.waitForExit() } }
        let other = try TestLAN.command(on: "b", lan: TestLAN.ipv6Only, ["avahi-browse", "-p", type])
        defer { other.signal(SIGTERM); _ = other.waitForExit() }
        for name in names { XCTAssertNotNil(other.waitForLine(timeout: 10) { $0.contains(name) }, other.transcript) }
        Thread.sleep(forTimeInterval: 1.2) // the daemon's query has run for a second: its all-for-now comes at once

        let listing = try once(type, lan: TestLAN.ipv6Only)
        XCTAssertEqual(Set(names).subtracting(listing.names), [], "missing from the listing: " + listing.transcript)
        XCTAssertEqual(listing.last, "complete", listing.transcript)
        XCTAssertLessThan(listing.seconds, 0.35, "ended by the daemon's all-for-now, not the quiet period: " + listing.transcript)
    }
}
