import Foundation
import XCTest

/// The virtual LAN brought up by Scripts/test, and the built tools.
///
/// Scripts/test sets SVC_LAN (the Scripts/lan path) and SVC_BIN_DIR (the build directory),
/// and SVC_REQUIRE_LAN=1 so that a missing LAN fails the tests instead of skipping them.
enum TestLAN {
    static let environment = ProcessInfo.processInfo.environment

    static var lanScript: String? { environment["SVC_LAN"] }

    /// The dual-stack LAN's name (Scripts/test sets SVC_TEST_LAN; "main" unless given), so
    /// that two test runs on one machine use LANs of their own.
    static let main = environment["SVC_TEST_LAN"] ?? "main"
    /// The IPv6-only LAN's name (SVC_TEST_LAN_V6; "v6" unless given).
    static let ipv6Only = environment["SVC_TEST_LAN_V6"] ?? "v6"
    /// The LAN whose hosts the svc-doctor tests break on purpose (SVC_TEST_LAN_DOCTOR,
    /// "<main>d" as Scripts/test names it), so no other test meets a broken host.
    static let doctor = environment["SVC_TEST_LAN_DOCTOR"] ?? main + "d"
    /// The two-subnet LAN (SVC_TEST_LAN_WIDE; "wide" unless given): host a on 10.78.1.0/24,
    /// b on 10.78.2.0/24, a router between them and a DNS host running BIND for `lab.test.`.
    static let wide = environment["SVC_TEST_LAN_WIDE"] ?? "wide"

    static var binDirectory: String {
        if let dir = environment["SVC_BIN_DIR"] { return dir }
        // The test runner is an executable next to the tools in the build directory.
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    static func tool(_ name: String) -> String { binDirectory + "/" + name }

    /// A script in Scripts/, next to Scripts/lan.
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: lanScript!).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Skips (or, under Scripts/test, fails) a test that needs the virtual LAN; fails one
    /// that would let the tools write keys and pins into the user's ~/.config.
    static func require() throws {
        guard lanScript == nil else {
            // The tools make keys and pins on first use: never in the user's ~/.config.
            if environment["XDG_CONFIG_HOME"] == nil {
                XCTFail("XDG_CONFIG_HOME is not set: the tools would make keys and pins in ~/.config; run Scripts/test, which gives each run a fresh one")
            }
            return
        }
        if environment["SVC_REQUIRE_LAN"] == "1" {
            XCTFail("SVC_LAN is not set although SVC_REQUIRE_LAN=1")
        }
        throw XCTSkip("needs the virtual LAN: run Scripts/test")
    }

    /// Runs a tool on a virtual host of a LAN (`TestLAN.main` unless given).
    static func run(_ tool: String, on host: String, lan: String = TestLAN.main, _ arguments: [String]) throws -> ToolProcess {
        try ToolProcess(lanScript!, ["--lan", lan, "exec", host, self.tool(tool)] + arguments, label: "\(tool)@\(lan)-\(host)")
    }

    /// Runs any command on a virtual host.
    static func command(on host: String, lan: String = TestLAN.main, _ arguments: [String]) throws -> ToolProcess {
        try ToolProcess(lanScript!, ["--lan", lan, "exec", host] + arguments, label: "\(arguments[0])@\(lan)-\(host)")
    }

    /// Runs Scripts/lan itself (e.g. `daemon restart a`) and waits for it.
    @discardableResult
    static func control(_ arguments: [String], lan: String = TestLAN.main) throws -> Int32? {
        try ToolProcess(lanScript!, ["--lan", lan] + arguments, label: "lan").waitForExit(timeout: 30)
    }

    /// The host's settings as `Scripts/lan env` prints them (NETNS, BUS, IFACE, IPV4, IPV6).
    static func settings(of host: String, lan: String = TestLAN.main) throws -> [String: String] {
        let env = try ToolProcess(lanScript!, ["--lan", lan, "env", host], label: "lan env")
        _ = env.waitForExit()
        return Dictionary(env.stdout.compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { $1 })
    }

    /// The host's addresses as Scripts/lan reports them.
    static func addresses(of host: String, lan: String = TestLAN.main) throws -> (ipv4: String, ipv6: String) {
        let values = try settings(of: host, lan: lan)
        return (values["IPV4"] ?? "", values["IPV6"] ?? "")
    }

    /// A name no other test uses, so tests do not see each other's services.
    static func uniqueName(_ base: String) -> String {
        "\(base) \(UInt32.random(in: 1000...9999))"
    }
}
