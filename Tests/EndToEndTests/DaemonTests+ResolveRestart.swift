import Foundation
import XCTest

/// avahi-daemon restarted while svc-connect resolves. Through Avahi's dns_sd layer this crashed
/// svc-connect (SIGSEGV, exit 139) in most runs: when the daemon goes away, that layer's
/// client-state callback calls the browse callback field of a resolve's ref, which its
/// `sdref_new` never sets (malloc'd, not zeroed), so it jumps to whatever the heap held there.
/// Resolves now go through libavahi-client, whose lost connection is reported.
extension DaemonTests {
    func testARestartDuringAResolveIsReportedNotACrash() throws {
        var statuses: [Int32?] = []
        for run in 1...8 {
            let name = TestLAN.uniqueName("restarted \(run)")
            let connect = try TestLAN.run("svc-connect", on: "b", [name, "--timeout", "8", "--message", "hi"])
            // svc-connect starts the resolve within milliseconds; the daemon gives up after 5 s.
            Thread.sleep(forTimeInterval: 1)
            XCTAssertEqual(try TestLAN.control(["daemon", "restart", "b"]), 0)
            let status = connect.waitForExit(timeout: 20)
            statuses.append(status)
            let message = connect.stderr.joined(separator: "\n")
            XCTAssertTrue(message.contains("avahi-daemon stopped while resolving \"\(name)\" of type _p2pipp._tcp in local."), connect.transcript)
            XCTAssertTrue(message.contains("service avahi-daemon start") && !message.contains("not running"), message)
        }
        XCTAssertEqual(statuses, Array(repeating: 69, count: 8), "exit 69 each time (139: a crash)")
    }
}
