import Foundation
import XCTest

/// What svc-browse --domain asks of a zone server, counted at the server (Scripts/hostile-dns
/// in `many` and `churn` modes reports each query on its stdout): the bounds on resolves per
/// read and on re-reads of a zone that keeps changing.
extension WideAreaTests {
    /// The query types the server reported, in order.
    func queries(_ server: ToolProcess) -> [String] {
        server.stdout.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["query"] as? String
        }
    }

    /// 150 instances on one host with --resolve: all listed, each once; at most 64 SRV
    /// queries (resolves) between two SOA polls, and the host's A asked once per read.
    func testAZoneOf150InstancesIsResolved64AReadAndAllListedOnce() throws {
        let server = try hostileDNS("many")
        defer { server.signal(SIGTERM); _ = server.waitForExit() }
        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.1", "--resolve"])
        defer { browser.signal(SIGINT); _ = browser.waitForExit(timeout: 10) }
        let rooms = (1...150).map { String(format: "room %03d", $0) }
        XCTAssertNotNil(browser.waitForLine(timeout: 30) { $0.hasPrefix("added \"room 150\"") }, browser.transcript)
        for (index, room) in rooms.enumerated() {
            let lines = browser.stdout.filter { $0.hasPrefix("added \"\(room)\" ") }
            XCTAssertEqual(lines, ["added \"\(room)\" _p2pipp._tcp lab.test. at h.lab.test.:\(4001 + index) [10.78.1.1]"], browser.transcript)
        }
        XCTAssertTrue(browser.stderr.contains { $0.contains("lists 150 new _p2pipp._tcp instances; resolving 64 a read") }, browser.transcript)

        // Resolves and address lookups counted per poll (the queries after each SOA query).
        var perPoll: [(srv: Int, a: Int)] = []
        for query in queries(server) {
            if query == "soa" { perPoll.append((0, 0)) }
            guard let last = perPoll.indices.last else { continue }
            if query == "srv" { perPoll[last].srv += 1 }
            if query == "a" { perPoll[last].a += 1 }
        }
        XCTAssertEqual(perPoll.map(\.srv).reduce(0, +), 150, "each instance resolved once: \(perPoll)")
        XCTAssertEqual(perPoll.map(\.srv).max(), 64, "\(perPoll)")
        XCTAssertTrue(perPoll.allSatisfy { $0.a == ($0.srv > 0 ? 1 : 0) }, "one A query per read that resolves: \(perPoll)")
    }

    /// A zone whose serial changes at every poll: read at the first poll and the next three
    /// (2 s apart), then at most every 30 s, said once on stderr; without the bound a 20 s
    /// browse reads it 10 times.
    func testAZoneThatChangesAtEveryPollIsReadAtMostEvery30Seconds() throws {
        let server = try hostileDNS("churn")
        defer { server.signal(SIGTERM); _ = server.waitForExit() }
        let browser = try TestLAN.run("svc-browse", on: "b", lan: lan, ["--domain", "lab.test.", "--dns-server", "10.78.1.1"])
        XCTAssertNotNil(browser.waitForLine(timeout: 10) { $0.hasPrefix("added \"churn 1-0\"") }, browser.transcript)
        Thread.sleep(forTimeInterval: 20)
        browser.signal(SIGINT)
        XCTAssertEqual(browser.waitForExit(timeout: 10), 0, browser.transcript)
        let asked = queries(server)
        XCTAssertEqual(asked.filter { $0 == "ptr" }.count, 4, "\(asked)")
        XCTAssertLessThanOrEqual(asked.filter { $0 == "soa" }.count, 5, "\(asked)")
        XCTAssertEqual(browser.stdout.filter { $0.hasPrefix("added ") }.count, 4 * 5, browser.transcript)
        XCTAssertTrue(browser.stderr.contains { $0.contains("lab.test. changed at each of the last 3 reads; reading it at most every 30 s") }, browser.transcript)
    }
}
