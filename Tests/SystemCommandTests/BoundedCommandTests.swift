import SystemCommand
import XCTest

/// The runner HostFirewall uses for nft and iptables-save and svc-doctor for dbus-send:
/// output, exit status, the environment, the deadline and the output bound.
final class BoundedCommandTests: XCTestCase {
    func testCollectsOutputAndStatus() {
        let command = BoundedCommand(path: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"], timeout: .seconds(5), outputLimit: 1024)
        XCTAssertEqual(command.run(), .exited(status: 3, output: Array("out\n".utf8), errorOutput: Array("err\n".utf8)))
    }

    func testKillsAToolThatRunsPastTheDeadline() {
        let start = ContinuousClock.now
        let command = BoundedCommand(path: "/bin/sh", arguments: ["-c", "exec sleep 30"], timeout: .milliseconds(200), outputLimit: 1024)
        XCTAssertEqual(command.run(), .killed("it did not finish within 0.2 seconds"))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
    }

    func testKillsAToolThatWritesTooMuch() {
        let command = BoundedCommand(path: "/bin/sh", arguments: ["-c", "exec yes"], timeout: .seconds(10), outputLimit: 1 << 20)
        XCTAssertEqual(command.run(), .killed("its output passed 1 MiB"))
    }

    func testAMissingProgramIsNotStarted() {
        guard case .notStarted(let why) = BoundedCommand(path: "/nonexistent/nft", arguments: [], timeout: .seconds(1), outputLimit: 1024).run() else {
            return XCTFail("started a program that does not exist")
        }
        XCTAssertTrue(why.hasPrefix("/nonexistent/nft: No such file or directory"), why)
    }

    func testTheProgramGetsOnlyTheEnvironmentItIsGiven() {
        let command = BoundedCommand(path: "/usr/bin/env", arguments: [], timeout: .seconds(5), outputLimit: 1024, environment: ["ONLY=this"])
        XCTAssertEqual(command.run(), .exited(status: 0, output: Array("ONLY=this\n".utf8), errorOutput: []))
        let standard = BoundedCommand(path: "/usr/bin/env", arguments: [], timeout: .seconds(5), outputLimit: 1024)
        XCTAssertEqual(standard.run(), .exited(status: 0, output: Array("PATH=/usr/sbin:/usr/bin:/sbin:/bin\nLC_ALL=C\n".utf8), errorOutput: []))
    }

    func testLocateFindsSystemProgramsOnly() {
        XCTAssertEqual(BoundedCommand.locate("sh"), "/usr/bin/sh")
        XCTAssertNil(BoundedCommand.locate("no-such-program-svc"))
    }
}
