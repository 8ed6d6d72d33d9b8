import Foundation
import XCTest

/// A local user's program that takes avahi-daemon's name on the doctor's LAN: the user
/// `nobody` runs a copy of python3 called `avahi-daemon`, with `-f` naming a file only root may
/// read, bound to UDP 5353, and started before the real daemon (which is restarted, so its pid
/// is higher). svc-doctor, as root, must still name the real daemon, never read or print that
/// file, and report the impostor as another program on the port.
extension DoctorTests {
    func testAUsersProgramNamedAvahiDaemonDoesNotPassForTheDaemon() throws {
        let directory = "/tmp/svc-doctor-impostor-\(getpid())-\(UInt32.random(in: 1000...9999))"
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? files.removeItem(atPath: directory) }
        let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        let fake = directory + "/avahi-daemon"
        try files.copyItem(atPath: python, toPath: fake)
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake)
        let marker = "SECRETHASH\(UInt32.random(in: 100_000...999_999))"
        let secret = directory + "/shadow"
        XCTAssertTrue(files.createFile(atPath: secret, contents: Data("root:$6$\(marker):19000:0:99999:7:::\n".utf8),
                                       attributes: [.posixPermissions: 0o600]))

        let impostor = try TestLAN.command(on: "b", lan: lan, ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", fake, "-c", """
            import socket, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("", 5353))
            print("bound", flush=True)
            time.sleep(120)
            """, "-f", secret])
        defer {
            impostor.signal(SIGKILL)
            _ = impostor.waitForExit()
        }
        XCTAssertNotNil(impostor.waitForLine { $0 == "bound" }, impostor.transcript)
        try lanControl(["daemon", "restart", "b"]) // the real daemon now has the higher pid
        defer { XCTAssertNoThrow(try repairHostB()) }
        let fakePID = impostor.process.processIdentifier

        let report = try diagnose("b")
        XCTAssertFalse(report.transcript.contains(marker), "the impostor's -f file was printed: \(report.transcript)")
        XCTAssertEqual(report.status(of: "avahi-daemon"), "ok", report.transcript)
        let observed = report.check("avahi-daemon")["observed"] as? [String] ?? []
        let process = try XCTUnwrap(observed.first { $0.hasPrefix("process: pid ") }, report.transcript)
        XCTAssertFalse(process.hasPrefix("process: pid \(fakePID):"), "the impostor was taken for the daemon: \(report.transcript)")
        XCTAssertTrue(process.contains("avahi.conf"), "the real daemon names its own configuration: \(process)")
        XCTAssertFalse(observed.contains { $0.contains(secret) }, report.transcript)
        XCTAssertEqual(report.status(of: "responders"), "warning", report.transcript)
        XCTAssertEqual(report.summary(of: "responders"),
                       "avahi-daemon (pid \(fakePID)) also holds UDP port 5353: replies meant for Avahi may reach it", report.transcript)

        // The text report, with every observation, does not print the file either.
        let text = try TestLAN.run("svc-doctor", on: "b", lan: lan, ["--verbose", "--timeout", "4"])
        XCTAssertNotNil(text.waitForExit(timeout: 30), text.transcript)
        XCTAssertFalse(text.transcript.contains(marker), "the impostor's -f file was printed: \(text.transcript)")
        XCTAssertTrue(text.transcript.contains("(avahi-daemon, not the installed avahi-daemon)"), text.transcript)
    }
}
