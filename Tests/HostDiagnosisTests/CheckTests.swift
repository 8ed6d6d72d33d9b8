import HostDiagnosis
import TransportCore
import XCTest

final class CheckTests: XCTestCase {
    func testBus() {
        XCTAssertEqual(Finding.bus(BusFacts(path: "/run/dbus/system_bus_socket", environmentAddress: nil, connectError: nil)).status, .ok)
        let down = Finding.bus(BusFacts(path: "/x/bus.sock", environmentAddress: "unix:path=/x/bus.sock", connectError: "No such file or directory"))
        XCTAssertEqual(down.status, .problem)
        XCTAssertEqual(down.fixes.first, "sudo systemctl start dbus")
        XCTAssertTrue(down.observed.contains("connect: No such file or directory"))
    }

    func daemonFacts(hostName: String = "studio", config: String = "[server]\n", process: Bool = true) -> DaemonFacts {
        var facts = DaemonFacts(query: .answered(.init(version: "avahi 0.8", hostName: hostName, state: 2)),
                                configPath: "/etc/avahi/avahi-daemon.conf", configOrigin: "the default", systemHostName: "studio.example.org")
        facts.config = AvahiConfig(parsing: config)
        if process { facts.process = .init(pid: 42, commandLine: ["avahi-daemon", "-s"]) }
        return facts
    }

    func testDaemonHealthy() {
        let finding = Finding.daemon(daemonFacts())
        XCTAssertEqual(finding.status, .ok)
        XCTAssertEqual(finding.summary, "avahi 0.8 runs as studio.local")
        XCTAssertTrue(finding.observed.contains("allow-interfaces=(not set: all)"))
    }

    func testDaemonNotRunning() {
        var facts = daemonFacts(process: false)
        facts.query = .failed("org.freedesktop.DBus.Error.ServiceUnknown")
        let finding = Finding.daemon(facts)
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.summary, "avahi-daemon is not running")
        XCTAssertEqual(finding.fixes, ["sudo systemctl start avahi-daemon"])
        facts.isInstalled = false
        XCTAssertEqual(Finding.daemon(facts).fixes.first, "sudo apt-get install avahi-daemon")
        facts.isInstalled = true
        facts.busReachable = false
        facts.query = .notAsked("the system bus is down")
        XCTAssertEqual(Finding.daemon(facts).fixes, ["start D-Bus first (see the bus check)", "sudo systemctl start avahi-daemon"])
    }

    func testDaemonRunningWithoutAnswers() {
        var facts = daemonFacts()
        facts.query = .failed("timed out")
        XCTAssertEqual(Finding.daemon(facts).status, .problem)
        facts.query = .notAsked("dbus-send is not installed")
        XCTAssertEqual(Finding.daemon(facts).status, .warning)
    }

    /// A bus full of connections (many clients at once) is not a daemon to restart: the
    /// diagnosis says what refused, as svc-connect does.
    func testDaemonUnaskedBecauseTheBusRefusesMoreConnections() {
        var facts = daemonFacts()
        facts.query = .failed("Failed to open connection to \"system\" message bus: The maximum number of active connections for UID 0 has been reached")
        let finding = Finding.daemon(facts)
        XCTAssertEqual(finding.status, .problem)
        XCTAssertEqual(finding.summary, "the system bus refuses more connections from this user, so avahi-daemon (running) cannot be asked")
        XCTAssertTrue(finding.fixes.first?.hasPrefix("end some of the programs connected to the system bus") == true, "\(finding.fixes)")
        XCTAssertFalse(finding.fixes.contains("sudo systemctl restart avahi-daemon"))
        XCTAssertTrue(DaemonFacts.isConnectionLimit("org.freedesktop.DBus.Error.LimitsExceeded: ..."))
        XCTAssertFalse(DaemonFacts.isConnectionLimit("timed out"))
    }

    func testDaemonRenamedAfterConflict() {
        let renamed = Finding.daemon(daemonFacts(hostName: "studio-2"))
        XCTAssertEqual(renamed.status, .warning)
        XCTAssertEqual(renamed.summary, "another machine on the network is called studio.local, so Avahi renamed this one studio-2.local")
        let configured = Finding.daemon(daemonFacts(hostName: "box-13", config: "[server]\nhost-name=box\n"))
        XCTAssertEqual(configured.status, .warning)
        XCTAssertTrue(configured.observed.contains("expected host name: box.local (host-name= in /etc/avahi/avahi-daemon.conf)"))
        XCTAssertEqual(Finding.daemon(daemonFacts(hostName: "studio-two")).status, .ok)
        XCTAssertTrue(DaemonFacts.isRenaming(of: "Studio", to: "studio-2"))
        XCTAssertFalse(DaemonFacts.isRenaming(of: "studio", to: "studio-"))
        XCTAssertFalse(DaemonFacts.isRenaming(of: "studio", to: "studio-١"), "only ASCII digits")
        XCTAssertFalse(DaemonFacts.isRenaming(of: "", to: "-2"))
    }

    func testDaemonConfigurationProblems() {
        XCTAssertEqual(Finding.daemon(daemonFacts(config: "[server]\nuse-ipv4=no\nuse-ipv6=no\n")).status, .problem)
        let reflector = Finding.daemon(daemonFacts(config: "[reflector]\nenable-reflector=yes\n"))
        XCTAssertEqual(reflector.status, .warning)
        XCTAssertEqual(reflector.fixes.first, "enable-reflector=no in [reflector] of /etc/avahi/avahi-daemon.conf")
        var facts = daemonFacts()
        facts.config = nil
        facts.configError = "open /x: No such file or directory (errno 2)"
        XCTAssertEqual(Finding.daemon(facts).status, .warning)
    }

    func testDaemonCommandLineAndTitle() {
        XCTAssertEqual(DaemonFacts.configPath(commandLine: ["avahi-daemon", "-f", "/run/a.conf", "--no-chroot"]), "/run/a.conf")
        XCTAssertEqual(DaemonFacts.configPath(commandLine: ["avahi-daemon", "--file=/b.conf"]), "/b.conf")
        XCTAssertNil(DaemonFacts.configPath(commandLine: ["avahi-daemon", "-f"]))
        XCTAssertNil(DaemonFacts.configPath(commandLine: []))
        XCTAssertEqual(DaemonFacts.hostName(processTitle: "avahi-daemon: running [studio-2.local]"), "studio-2")
        XCTAssertNil(DaemonFacts.hostName(processTitle: "avahi-daemon: chroot helper"))
        XCTAssertNil(DaemonFacts.hostName(processTitle: "avahi-daemon: running []"))
    }

    func owner(_ pid: Int32, _ name: String) -> ResponderFacts.Owner { .init(pid: pid, name: name, commandLine: name + " --flag") }
    let any4 = IPAddress(bytes: [0, 0, 0, 0])!

    func testResponders() {
        let none = ResolvedConfig(files: [])
        XCTAssertEqual(Finding.responders(.init(sockets: [.init(address: any4, uid: 0, owners: [owner(42, "avahi-daemon")])],
                                                daemonPID: 42, resolved: none, resolvedRunning: false)).status, .ok)
        let python = Finding.responders(.init(sockets: [.init(address: any4, uid: 0, owners: [owner(42, "avahi-daemon"), owner(7, "python3")])],
                                              daemonPID: 42, resolved: none, resolvedRunning: false))
        XCTAssertEqual(python.status, .warning)
        XCTAssertEqual(python.fixes, ["stop or reconfigure pid 7: python3 --flag"])
        var confirmedResolved = owner(9, "systemd-resolve")
        confirmedResolved.isSystemdResolved = true
        let resolved = Finding.responders(.init(sockets: [.init(address: any4, uid: 0, owners: [confirmedResolved])],
                                                daemonPID: nil, resolved: none, resolvedRunning: true))
        XCTAssertEqual(resolved.status, .problem)
        XCTAssertEqual(resolved.fixes.first, "MulticastDNS=no in [Resolve] of /etc/systemd/resolved.conf")
        let unseen = Finding.responders(.init(sockets: [.init(address: any4, uid: 0, owners: []), .init(address: any4, uid: 0, owners: [])],
                                              daemonPID: nil, resolved: none, resolvedRunning: false))
        XCTAssertEqual(unseen.status, .warning)
        XCTAssertEqual(unseen.summary, "a process that cannot be seen also holds UDP port 5353: replies meant for Avahi may reach it")
        var asUser = ResponderFacts(sockets: [.init(address: any4, uid: 104, owners: [])], daemonPID: 42, resolved: none, resolvedRunning: false)
        asUser.daemonUID = 104
        let avahiUsers = Finding.responders(asUser)
        XCTAssertEqual(avahiUsers.status, .ok, "without root, a socket of avahi's user is avahi's")
        XCTAssertEqual(avahiUsers.observed.first, "UDP 0.0.0.0:5353 held by uid 104: avahi-daemon's user")
        let configured = ResolvedConfig(files: [("r.conf", "[Resolve]\nMulticastDNS=yes\n")])
        XCTAssertEqual(Finding.responders(.init(sockets: [], daemonPID: nil, resolved: configured, resolvedRunning: true)).status, .warning)
        XCTAssertEqual(Finding.responders(.init(sockets: [], daemonPID: nil, resolved: configured, resolvedRunning: false)).status, .ok)
    }

    func testNSS() {
        let hosts = NSSHosts(parsing: "hosts: files mdns4_minimal [NOTFOUND=return] dns")
        XCTAssertEqual(Finding.nss(.init(hosts: hosts, readError: nil, libraries: ["/lib/libnss_mdns4_minimal.so.2"])).status, .ok)
        let missing = Finding.nss(.init(hosts: NSSHosts(parsing: "hosts: files dns"), readError: nil, libraries: []))
        XCTAssertEqual(missing.status, .warning)
        XCTAssertEqual(missing.fixes, ["sudo apt-get install libnss-mdns", "hosts: files mdns4_minimal [NOTFOUND=return] dns   (in /etc/nsswitch.conf)"])
        XCTAssertEqual(Finding.nss(.init(hosts: nil, readError: "open: denied", libraries: ["/lib/libnss_mdns.so.2"])).status, .warning)
    }

    func testSelfTest() {
        var facts = SelfTestFacts()
        facts.completed = [.init(.listen, "TCP port 1"), .init(.publish, "'p'")]
        XCTAssertEqual(Finding.selfTest(facts).status, .ok)
        facts.failure = .init(.browse, "not found in time")
        let failed = Finding.selfTest(facts)
        XCTAssertEqual(failed.status, .problem)
        XCTAssertEqual(failed.observed.last, "browse failed: not found in time")
        XCTAssertEqual(failed.summary, "the self-test failed at browse: discovery does not work end to end")
    }

    func testReportText() {
        let diagnosis = Diagnosis([
            Finding(check: "a", title: "first", status: .ok, summary: "fine", observed: ["x"]),
            Finding(check: "b", title: "second", status: .problem, summary: "broken", observed: ["y"], fixes: ["do z"]),
            Finding(check: "c", title: "third", status: .warning, summary: "odd"),
        ])
        XCTAssertEqual(diagnosis.status, .problem)
        XCTAssertEqual(diagnosis.textLines(verbose: false), [
            "ok       first: fine",
            "problem  second: broken",
            "         saw: y",
            "         fix: do z",
            "warning  third: odd",
            "1 problem, 1 warning",
        ])
        XCTAssertEqual(diagnosis.textLines(verbose: true)[1], "         saw: x")
        XCTAssertEqual(Diagnosis([]).status, .ok)
        XCTAssertEqual(Diagnosis([]).summaryText, "no problems, 0 warnings")
    }
}
