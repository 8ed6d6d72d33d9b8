import HostDiagnosis
import TransportCore
import XCTest

/// Which process counts as avahi-daemon or systemd-resolved, and what the checks make of a
/// process that only takes such a name (a local user's program): fed facts, no /proc.
final class ProgramIdentityTests: XCTestCase {
    typealias Facts = ProgramIdentity.ProcessFacts
    let avahi = ProgramIdentity.avahiDaemon(avahiUID: 105)

    func testTheInstalledDaemonRunByRootOrAvahiIsTheDaemon() {
        XCTAssertTrue(avahi.matches(Facts(pid: 10, executable: "/usr/sbin/avahi-daemon", realUID: 0)))
        XCTAssertTrue(avahi.matches(Facts(pid: 10, executable: "/usr/sbin/avahi-daemon", realUID: 105)))
        XCTAssertTrue(avahi.matches(Facts(pid: 10, executable: "/usr/sbin/avahi-daemon (deleted)", realUID: 105)), "after an upgrade")
        // Another user's process without root: its executable cannot be read; its user decides.
        XCTAssertTrue(avahi.matches(Facts(pid: 10, executable: nil, realUID: 105)))
    }

    func testAUsersProgramNamedLikeTheDaemonIsNotIt() {
        XCTAssertFalse(avahi.matches(Facts(pid: 10, executable: "/tmp/x/avahi-daemon", realUID: 65534)))
        XCTAssertFalse(avahi.matches(Facts(pid: 10, executable: "/usr/sbin/avahi-daemon", realUID: 65534)), "the binary, run by a user")
        XCTAssertFalse(avahi.matches(Facts(pid: 10, executable: nil, realUID: 1000)))
        XCTAssertFalse(avahi.matches(Facts(pid: 10, executable: "/tmp/x/avahi-daemon", realUID: 0)), "root running another file")
        XCTAssertFalse(avahi.matches(Facts(pid: 10, executable: "/usr/sbin/avahi-daemon", realUID: nil)), "unknown user")
        XCTAssertFalse(ProgramIdentity.avahiDaemon(avahiUID: nil).matches(Facts(pid: 10, executable: nil, realUID: 105)))
    }

    func testTheBusOwnerIsPreferredAndAnImpostorWithALowerPidIsSkipped() {
        let fake = Facts(pid: 100, executable: "/tmp/fake/avahi-daemon", realUID: 65534)
        let real = Facts(pid: 200, executable: "/usr/sbin/avahi-daemon", realUID: 0)
        let other = Facts(pid: 300, executable: "/usr/sbin/avahi-daemon", realUID: 0)
        XCTAssertEqual(avahi.choose(among: [fake, real, other], busOwner: nil)?.pid, 200)
        XCTAssertEqual(avahi.choose(among: [fake, real, other], busOwner: 300)?.pid, 300)
        XCTAssertEqual(avahi.choose(among: [fake, real], busOwner: 100)?.pid, 200, "the bus does not vouch for a file it did not start")
        XCTAssertNil(avahi.choose(among: [fake], busOwner: nil), "no daemon runs, only an impostor")
    }

    func testSystemdResolvedIsItsInstalledBinary() {
        let resolved = ProgramIdentity.systemdResolved(resolveUID: 990)
        XCTAssertTrue(resolved.matches(Facts(pid: 5, executable: "/usr/lib/systemd/systemd-resolved", realUID: 990)))
        XCTAssertTrue(resolved.matches(Facts(pid: 5, executable: "/lib/systemd/systemd-resolved", realUID: 990)))
        XCTAssertFalse(resolved.matches(Facts(pid: 5, executable: "/home/u/systemd-resolve", realUID: 1000)))
    }

    func testConfigurationLinesAreNeverEchoed() {
        let secret = "root:$6$SECRETHASH:19000:0:99999:7:::"
        let config = AvahiConfig(parsing: "\(secret)\n[server]\nuse-ipv6=no\nalice:$6$ALICE\n")
        XCTAssertEqual(config.malformedLines, ["line 1: no '=' (neither a setting, a [section] nor a comment)",
                                               "line 4: no '=' (neither a setting, a [section] nor a comment)"])
        var facts = DaemonFacts(query: .answered(.init(version: "avahi 0.8", hostName: "h", state: 2)), configPath: "/etc/shadow",
                                configOrigin: "the default", systemHostName: "h")
        facts.config = config
        let finding = Finding.daemon(facts)
        let text = ([finding.summary] + finding.observed + finding.fixes).joined(separator: "\n")
        XCTAssertFalse(text.contains("SECRETHASH"), text)
        XCTAssertFalse(text.contains("ALICE"), text)
        XCTAssertTrue(text.contains("configuration line 1: no '='"), text)
    }

    func testAProcessNamedAvahiDaemonHoldingThePortIsAnotherProgram() throws {
        let address = try XCTUnwrap(IPAddress(bytes: [0, 0, 0, 0]))
        let fake = ResponderFacts.Owner(pid: 100, name: "avahi-daemon", commandLine: "/tmp/fake/avahi-daemon -f /tmp/secret")
        let real = ResponderFacts.Owner(pid: 200, name: "avahi-daemon", commandLine: "avahi-daemon: running [h.local]")
        let facts = ResponderFacts(sockets: [.init(address: address, uid: 65534, owners: [fake]), .init(address: address, uid: 0, owners: [real])],
                                   daemonPID: 200, resolved: ResolvedConfig(files: []), resolvedRunning: false)
        let finding = Finding.responders(facts)
        XCTAssertEqual(finding.status, .warning, finding.observed.joined(separator: "\n"))
        XCTAssertTrue(finding.observed.contains("UDP 0.0.0.0:5353 held by pid 100 (avahi-daemon, not the installed avahi-daemon): /tmp/fake/avahi-daemon -f /tmp/secret"),
                      finding.observed.joined(separator: "\n"))
        XCTAssertTrue(finding.observed.contains("UDP 0.0.0.0:5353 held by pid 200 (avahi-daemon): avahi-daemon"), finding.observed.joined(separator: "\n"))
        // Without a confirmed daemon, no process is taken for it by its name.
        var unconfirmed = facts
        unconfirmed.daemonPID = nil
        XCTAssertEqual(Finding.responders(unconfirmed).status, .warning)
    }

    func testOnlyTheRealSystemdResolvedIsBlamedAsIt() throws {
        let address = try XCTUnwrap(IPAddress(bytes: [0, 0, 0, 0]))
        let impostor = ResponderFacts.Owner(pid: 100, name: "systemd-resolve", commandLine: "/tmp/systemd-resolve")
        var facts = ResponderFacts(sockets: [.init(address: address, uid: 1000, owners: [impostor])], daemonPID: nil,
                                   resolved: ResolvedConfig(files: []), resolvedRunning: false)
        let fake = Finding.responders(facts)
        XCTAssertEqual(fake.status, .warning)
        XCTAssertTrue(fake.summary.hasPrefix("systemd-resolve (pid 100) also holds UDP port 5353"), fake.summary)
        facts.sockets[0].owners[0].isSystemdResolved = true
        let real = Finding.responders(facts)
        XCTAssertEqual(real.status, .problem)
        XCTAssertEqual(real.summary, "systemd-resolved answers mDNS on UDP 5353 beside avahi-daemon")
    }

    func testAProbeNameOtherHostsAnswerForIsBlamedOnTheNetwork() {
        var facts = SelfTestFacts()
        facts.completed = [.init(.listen, "TCP port 4000")]
        facts.failure = .init(.publish, "another host on the network answers for the probe's name 'svc-doctor probe 7' (renamed 8 times)")
        facts.probeRenames = 8
        let finding = Finding.selfTest(facts)
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.summary, "another host on the network answers for the probe's name (renamed 8 times)")
        XCTAssertFalse(finding.fixes.joined().contains("avahi-daemon"), finding.fixes.joined())
    }
}
