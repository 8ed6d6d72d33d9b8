import Foundation
import XCTest

/// A browse domain that is a plain name inside the LAN's BIND zone, not a zone apex: it has no
/// SOA of its own, so no serial tells its changes (review attacks16z finding 4).
extension WideAreaTests {
    /// Sends `update` lines to the LAN's BIND for the zone lab.test., signed with its key.
    func updateZone(_ lines: [String]) throws {
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let update = try TestLAN.command(on: "b", lan: lan, ["nsupdate", "-k", settings["TSIG_KEY"]!])
        update.send("server \(settings["DNS_SERVER"]!)\nzone lab.test.\n" + lines.map { "update \($0)\n" }.joined() + "send\n")
        update.closeStdin()
        XCTAssertEqual(update.waitForExit(timeout: 20), 0, update.transcript)
    }

    /// The listing itself tells a change when there is no serial: an instance added after the
    /// browse polled a few times is listed within a poll or two, not 30 s later as for a zone
    /// that keeps changing (the old code counted every serial-less poll as a change).
    func testADomainWithoutSOAOfItsOwnIsFollowedEvery2Seconds() throws {
        let settings = try TestLAN.settings(of: "b", lan: lan)
        let service = "_p2pipp._tcp.nonapex.lab.test."
        try updateZone(["delete \(service) PTR", "add \(service) 30 PTR one.\(service)"])
        defer { try? updateZone(["delete \(service) PTR"]) }
        XCTAssertEqual(try dig(from: "b", "nonapex.lab.test.", "SOA"), [], "nonapex.lab.test. must have no SOA of its own")

        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "nonapex.lab.test.", "--dns-server", settings["DNS_SERVER"]!])
        defer { browser.signal(SIGINT); _ = browser.waitForExit(timeout: 10) }
        XCTAssertNotNil(browser.waitForLine(timeout: 10) { $0.hasPrefix("added \"one\"") }, browser.transcript)
        // Past the three polls that made the old code treat the domain as churning.
        Thread.sleep(forTimeInterval: 8)
        try updateZone(["add \(service) 30 PTR two.\(service)"])
        let added = Date()
        XCTAssertNotNil(browser.waitForLine(timeout: 10) { $0.hasPrefix("added \"two\"") }, browser.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(added), 5, browser.transcript)
        XCTAssertFalse(browser.stderr.contains { $0.contains("at most once every 30 s") }, browser.transcript)
    }
}
