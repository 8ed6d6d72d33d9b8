import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD

/// svc-doctor's validated command line.
struct DoctorOptions: Sendable {
    var json = false
    var verbose = false
    var avahiConfig: String?
    /// `--interface`: look at this interface only, and run the self-test on it.
    var interface: NetworkInterface?
    /// The TCP port the firewall check asks about; nil: an ephemeral port, as svc-publish uses.
    var port: UInt16?
    var selfTestTimeout: Duration = .seconds(5)
    /// `--domain`: the unicast zone to check (nil: the zones the network recommends, if any).
    var zone: DNSName?
    /// `--dns-server`: the zone's server (default: the first nameserver of resolv.conf).
    var dnsServer: UnicastDNSSD.IPAddress?
    /// `--tsig-key`: the key file whose signature the zone's server is asked to accept.
    var tsigKeyPath: String?
    /// `--type`: the service type whose records the zone should hold.
    var type: DiscoveryCore.ServiceType = .p2pipp

    /// The exit status when at least one check is a problem.
    static let problemExitCode = ExitCode(1)

    static let spec = CommandSpec(
        name: "svc-doctor",
        version: svcVersion,
        overview: "Find out why service discovery does not work on this host, and how to fix it.",
        options: [
            .init("avahi-config", value: "path", help: "avahi-daemon's configuration file (default: the one the running\ndaemon was started with (-f), else /etc/avahi/avahi-daemon.conf)."),
            .interface,
            .init("port", value: "port", help: "Check that the firewall lets incoming TCP to this port in (the port\nyou give svc-publish --port; default, or 0: the ephemeral ports it\nlistens on without --port)."),
            .init("timeout", value: "seconds", help: "How long the live self-test may take (default: 5)."),
            .init("domain", value: "domain", help: "Also check this unicast DNS-SD zone (across subnets): its DNS server,\nthe zone, the --tsig-key and the --type's records (default: the zones\nthe network's DNS server recommends, if any)."),
            .init("dns-server", value: "address", help: "The zone's DNS server (default: the first nameserver of\n/etc/resolv.conf)."),
            .init("tsig-key", value: "file", completion: .file, help: "The TSIG key file svc-publish --domain signs with: check that only\nyou can read it and that the zone's server accepts its signature."),
            .serviceType,
            .init("verbose", short: "v", help: "Also show what the checks that passed saw."),
            .init("json", help: "Print one JSON object per check, then a summary (JSON Lines)."),
        ],
        discussion: """
            CHECKS (in this order; each is ok, warning or problem, says what it saw, and
            gives the exact command or configuration line that fixes it):
              bus           The D-Bus system bus ($DBUS_SYSTEM_BUS_ADDRESS, else
                            /run/dbus/system_bus_socket) accepts a connection. Every
                            program reaches avahi-daemon through it.
              avahi-daemon  avahi-daemon runs in this network namespace and answers on the
                            bus (version, host name, state); a host name renamed after a
                            conflict (name-2.local: another machine is called name.local)
                            is a warning; so is enable-reflector=yes; use-ipv4=no with
                            use-ipv6=no is a problem. Shows allow-interfaces,
                            deny-interfaces, use-ipv4 and use-ipv6 from its configuration.
                            Only the installed avahi-daemon run as root or avahi counts as
                            the daemon; its configuration lines are never shown.
              responders    Who else holds UDP port 5353 (/proc/net/udp, udp6, mapped to
                            processes): systemd-resolved is a problem (MulticastDNS=no
                            fixes it), any other program a warning; systemd-resolved set
                            to MulticastDNS=yes or resolve is a warning. A program merely
                            named avahi-daemon or systemd-resolve is another program.
              interfaces    Which interfaces are up, have addresses and MULTICAST, and which
                            Avahi uses (as avahi-daemon decides, with allow-interfaces and
                            deny-interfaces). None is a problem; an interface without
                            MULTICAST, or a container, VM, bridge or VPN interface Avahi
                            uses (docker*, br-*, veth ports, virbr*, tun*, tap*, wg*, ...)
                            is a warning.
              firewall      Whether the firewall (nft -j list ruleset, iptables-save,
                            ip6tables-save) lets mDNS (UDP 5353 to 224.0.0.251 and ff02::fb)
                            and incoming TCP in: to --port, else to the ephemeral ports
                            svc-publish listens on without --port (the lowest, middle and
                            highest of /proc/sys/net/ipv4/ip_local_port_range). Dropped is a
                            problem, with the deciding rule and the command that lets it
                            in; when only fixed ports are let in, the fix is svc-publish
                            --port with one of them. A rule it cannot interpret, or a
                            firewall it cannot read (not root, no nft or iptables), is a
                            warning.
              nss-mdns      Whether other programs resolve .local names: libnss_mdns is
                            installed and the hosts: line of /etc/nsswitch.conf names mdns,
                            mdns4, mdns_minimal, ... Missing is a warning: svc tools ask
                            avahi-daemon directly and do not need it.
              self-test     Publishes a probe service (_svc-doctor._tcp) through the daemon,
                            browses for it, resolves it, looks up its addresses, connects to
                            it over TCP, and withdraws it, within --timeout. A failure is a
                            problem, named by the step that failed; a failed publish names
                            another host answering for the probe's name as a cause (as the
                            cause when the doctor saw the renamed probe).
              With --interface, the interfaces check looks at that interface alone (a
              problem when Avahi does not use it) and the self-test publishes, browses and
              resolves on it only.
              dns-server, dns-zone, tsig-key, dns-records
                            With --domain ZONE (else for each browse or legacy browse
                            domain the network's DNS server recommends, at most \(ZoneProbe.maximumRecommendedZones); none:
                            no such check): the DNS server answers (nothing listening on
                            port 53, no route and no answer in 3 s are told apart); it
                            serves ZONE (its SOA); with --tsig-key, the key file is
                            yours alone (mode 0600) and the server accepts its signature
                            (an update whose only prerequisite is that an unused name is
                            unused: it changes nothing); the --type has services in ZONE
                            (none is a warning). Each failure names the BIND line or what
                            to ask the zone's administrator for.
              svc-doctor only reads: it never changes the system. Run it as root to see
              which processes of other users hold UDP 5353 and to read the firewall.

            OUTPUT:
              One line per check ('ok', 'warning' or 'problem', the check, what it found),
              then, for warnings and problems, 'saw:' lines (what it saw) and 'fix:' lines;
              a last line counts problems and warnings. With --json, one object per check:
              {"event":"check","time":...,"check":"bus","title":...,"status":"ok",
              "summary":...,"observed":[...],"fixes":[...]}, then
              {"event":"summary","time":...,"status":"problem","problems":1,"warnings":0,
              "exit_code":1}.

            EXIT STATUS:
              0    no check is a problem (warnings alone do not count)
              1    at least one check is a problem
              64   bad arguments

            EXAMPLES:
              svc-doctor
              sudo svc-doctor --port 4242
              svc-doctor --json | jq 'select(.status != "ok")'
              svc-doctor --domain lab.example. --tsig-key ~/.config/svc/lab.key
            """)

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        json = parsed.flag("json")
        verbose = parsed.flag("verbose")
        avahiConfig = parsed.value("avahi-config")
        interface = try parsed.networkInterface()
        if avahiConfig?.isEmpty == true { throw UsageError("--avahi-config needs a file path") }
        if let text = parsed.value("port") {
            let number = try parsePort(text, option: "port")
            port = number == 0 ? nil : number
        }
        if let text = parsed.value("domain") {
            do throws(UnicastDNSSDError) {
                zone = try DNSName(dotted: text)
            } catch {
                throw UsageError("--domain takes a DNS zone such as lab.example.: \(error.message)")
            }
            if zone?.labels.isEmpty == true || zone?.labels.last.map({ String(decoding: $0, as: UTF8.self).lowercased() }) == "local" {
                throw UsageError("--domain names a unicast zone; local. is mDNS, which the other checks cover")
            }
        }
        if let text = parsed.value("dns-server") {
            guard let address = UnicastDNSSD.IPAddress(text) else { throw UsageError("--dns-server takes an IPv4 or IPv6 address, not '\(text)'") }
            dnsServer = address
        }
        tsigKeyPath = parsed.value("tsig-key")
        if tsigKeyPath != nil && zone == nil { throw UsageError("--tsig-key is checked against a zone: give it with --domain, e.g. --domain lab.example.") }
        if tsigKeyPath?.isEmpty == true { throw UsageError("--tsig-key needs a file path") }
        type = try parsed.serviceType()
        if let text = parsed.value("timeout") {
            selfTestTimeout = try parseSeconds(text, option: "timeout")
            if selfTestTimeout > .seconds(60) { throw UsageError("--timeout takes at most 60 seconds, not '\(text)'") }
        }
    }
}
