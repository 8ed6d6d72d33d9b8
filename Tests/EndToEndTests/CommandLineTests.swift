import Foundation
import XCTest

/// The tools' command lines, run as built binaries: exact help, usage errors and exit codes.
/// None of these reach a daemon, so they need no virtual LAN.
final class CommandLineTests: XCTestCase {
    func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32?, out: [String], err: [String]) {
        let process = try ToolProcess(TestLAN.tool(tool), arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"])
        let status = process.waitForExit(timeout: 10)
        return (status, process.stdout, process.stderr)
    }

    func testHelpAndVersionOnEveryTool() throws {
        for tool in ["svc-publish", "svc-browse", "svc-connect", "svc-doctor"] {
            let help = try run(tool, ["--help"])
            XCTAssertEqual(help.status, 0)
            XCTAssertEqual(help.out.first.map { String($0.prefix(10)) }, "OVERVIEW: ")
            XCTAssertTrue(help.out.contains { $0.hasPrefix("USAGE: \(tool) ") })
            XCTAssertTrue(help.out.contains("OPTIONS:"))
            XCTAssertTrue(help.out.contains("  -h, --help              Show help information."), help.out.joined(separator: "\n"))
            XCTAssertEqual(help.err, [])
            XCTAssertEqual(try run(tool, ["-h"]).out, help.out)
            let version = try run(tool, ["--version"])
            XCTAssertEqual(version.status, 0)
            XCTAssertEqual(version.out, ["\(tool) 0.1.0"])
        }
    }

    func testUsageErrorLayoutAndExitCode() throws {
        let result = try run("svc-browse", ["--bogus"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.out, [])
        XCTAssertEqual(result.err, [
            "Error: Unknown option '--bogus'",
            "Usage: svc-browse [--type <type>] [--domain <domain>] [--dns-server <address>] [--domains] [--all] [--interface <name>] [--resolve] [--verify] [--once] [--timeout <seconds>] [--json]",
            "  See 'svc-browse --help' for more information.",
        ])
    }

    func testInvalidValuesAreUsageErrorsThatSayWhy() throws {
        let cases: [(String, [String], String)] = [
            ("svc-publish", ["--type", "p2pipp"], "Error: invalid service type 'p2pipp': expected two labels, each starting with '_'; write it as _name._tcp or _name._udp, e.g. _p2pipp._tcp"),
            ("svc-publish", ["--name", String(repeating: "n", count: 64)], "Error: instance name is 64 bytes of UTF-8; it must be 1 to 63 bytes"),
            ("svc-publish", ["--txt", "=x"], "Error: invalid TXT key '': keys must have at least one character"),
            ("svc-publish", ["--port", "70000"], "Error: --port takes a port from 0 to 65535 (0: any free port), not '70000'"),
            ("svc-publish", ["--conflict", "maybe"], "Error: --conflict takes 'rename' or 'fail', not 'maybe'"),
            ("svc-publish", ["--history", "101"], "Error: --history takes a whole number from 0 to 100, not '101'"),
            ("svc-publish", ["--dns-timeout", "5"], "Error: --dns-timeout bounds the exchanges with --dns-server: give --dns-server and --tsig-key too"),
            ("svc-publish", ["--domain", "lab.example.", "--dns-server", "192.0.2.53", "--tsig-key", "k", "--dns-timeout", "61"], "Error: --dns-timeout takes a whole number of seconds from 1 to 60, not '61'"),
            ("svc-publish", ["--timestamps", "--no-timestamps"], "Error: --timestamps and --no-timestamps cannot be used together"),
            ("svc-browse", ["--timeout", "soon"], "Error: --timeout takes a number of seconds greater than 0 and at most 86400, not 'soon'"),
            ("svc-browse", ["--all", "--type", "_http._tcp"], "Error: --all and --type cannot be used together"),
            ("svc-browse", ["--domain", "a..b"], "Error: invalid domain 'a..b': each label must be 1 to 63 bytes; for the local network use local."),
            ("svc-connect", [], "Error: Missing expected argument '<name>'"),
            ("svc-doctor", ["--timeout", "61"], "Error: --timeout takes at most 60 seconds, not '61'"),
            ("svc-doctor", ["--avahi-config="], "Error: --avahi-config needs a file path"),
            ("svc-doctor", ["--port", "65536"], "Error: --port takes a port from 0 to 65535 (0: any free port), not '65536'"),
            ("svc-connect", ["a", "b"], "Error: Unexpected argument 'b'"),
            ("svc-connect", ["x", "--type", "_x._sctp"], "Error: invalid service type '_x._sctp': the protocol must be _tcp or _udp, not '_sctp'; write it as _name._tcp or _name._udp, e.g. _p2pipp._tcp"),
        ]
        for (tool, arguments, message) in cases {
            let result = try run(tool, arguments)
            XCTAssertEqual(result.status, 64, "\(tool) \(arguments)")
            XCTAssertEqual(result.err.first, message)
            XCTAssertEqual(result.err.last, "  See '\(tool) --help' for more information.")
        }
    }
}
