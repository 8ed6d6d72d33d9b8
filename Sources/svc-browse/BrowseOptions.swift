import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD

/// svc-browse's validated command line.
struct BrowseOptions: Sendable {
    var type: DiscoveryCore.ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    /// Every service type on the network (`--all`) instead of `type`.
    var allTypes = false
    var interface: NetworkInterface?
    var resolve = false
    var verify = false
    var once = false
    var timeout: Duration?
    var json = false
    /// `--dns-server`: the server of a unicast --domain (default: resolv.conf's first).
    var dnsServer: IPAddress?
    /// Whether --domain is a unicast zone, browsed on its DNS server instead of over mDNS.
    var isUnicast: Bool { domain != .local }
    /// `--domains`: list the domains the network recommends instead of browsing.
    var listDomains = false
    /// Whether the network's legacy browse domains are browsed too: a plain browse of one
    /// type (no --domain, --all, --interface or --verify).
    var browsesLegacyDomains = false

    static let spec = CommandSpec(
        name: "svc-browse",
        version: svcVersion,
        overview: "List DNS-SD services on the local network, live, as they come and go.",
        options: [
            .serviceType,
            .domain,
            .init("dns-server", value: "address", help: "The DNS server of a unicast --domain or of --domains (default: the first\nnameserver of /etc/resolv.conf)."),
            .init("domains", help: "List the domains the network recommends for browsing and registering\n(its DNS server's b, db, lb, r and dr._dns-sd._udp records), then exit."),
            .init("all", help: "List every service type on the network, and the instances of each."),
            .interface,
            .init("resolve", help: "Also show each service's host, port, addresses and TXT record."),
            .init("verify", help: "Also check that each service answers (a room: says HELLO, not joined; implies --resolve)."),
            .init("once", help: "Print what is there now and exit (like avahi-browse -t); waits at most 3 s more than its minimum wait."),
            .init("timeout", value: "seconds", help: "Stop browsing after this many seconds (with --once: wait at most this long for the first batch)."),
            .json,
        ],
        discussion: """
            OUTPUT:
              One line per event: 'added', 'removed' or 'interfaces' (the set of interfaces
              changed), then the quoted instance name, type, domain and interfaces. With --json,
              events are objects with "event", "time", "name", "type", "domain", "interfaces",
              and with --resolve "host", "port", "addresses", "txt" and "txt_raw" (hex); with
              --verify "answering" (true or false) and, when false, "verify_error". After the
              first batch a {"event":"complete"} line says the list is complete for now.
              With --all, each service type on the network is a line too: 'type-added',
              'type-removed' or 'type-interfaces', then the type, domain and interfaces
              (JSON: "event", "time", "type", "domain", "interfaces"), before its instances;
              the first batch is complete once every type's instances are listed. At most
              \(AllTypesState.defaultMaximumTypes) types and \(AllTypesState.defaultMaximumInstances) instances are kept; types that are not _name._tcp
              or _name._udp with a valid RFC 6335 name are left out.
              With --interface, "interfaces" names only that interface.
              A --domain other than local. is a unicast zone (across subnets), read from its
              DNS server: its SOA serial is asked every 2 s (every 30 s once three polls
              in a row found it changed, until one finds it unchanged) and the instances
              (all of them, however many) read again when it changed; there are no
              "interfaces", and --all, --interface and --verify do not apply.
              Without --domain (and without --all, --interface and --verify), the
              network's legacy browse domains (lb._dns-sd._udp PTR records that its DNS
              server holds under the resolv.conf search domains and the host's subnets'
              reverse-mapping names) are browsed too, as with --domain; '--domain local.'
              browses the local link only.
              --domains prints one line per domain: the kind (browse, default-browse,
              legacy-browse, register, default-register), the domain and the names asked
              that gave it; with --json {"event":"domain","time",...,"kind","domain",
              "queries":[...]}, then {"event":"complete"}. At most \(DomainEnumeration.maximumStartingPoints) names are asked, \(DomainEnumeration.maximumDomainsPerAnswer) domains taken
              from one answer and \(DomainEnumeration.maximumDomains) in all.
              When the reader of standard output goes away ('svc-browse | head -1'), it
              exits 0.

            \(ExitCode.table)

            EXAMPLES:
              svc-browse --once --resolve
              svc-browse --type _http._tcp --json
              svc-browse --all --once --interface eth0
              svc-browse --domains
            """,
        environment: [.systemBus])

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        type = try parsed.serviceType()
        domain = try parsed.domain()
        allTypes = parsed.flag("all")
        if allTypes && parsed.value("type") != nil { throw UsageError("--all and --type cannot be used together") }
        interface = try parsed.networkInterface()
        verify = parsed.flag("verify")
        resolve = parsed.flag("resolve") || verify
        once = parsed.flag("once")
        json = parsed.flag("json")
        if let text = parsed.value("timeout") { timeout = try parseSeconds(text, option: "timeout") }
        listDomains = parsed.flag("domains")
        if listDomains, let other = ["type", "domain", "all", "interface", "resolve", "verify", "once", "timeout"].first(where: { parsed.value($0) != nil || parsed.flag($0) }) {
            throw UsageError("--domains lists the network's domains; it does not go with --\(other)")
        }
        browsesLegacyDomains = parsed.value("domain") == nil && !allTypes && interface == nil && !verify && !listDomains
        if let text = parsed.value("dns-server") {
            guard let address = IPAddress(text) else { throw UsageError("--dns-server takes an IPv4 or IPv6 address, not '\(text)'") }
            guard isUnicast || listDomains else { throw UsageError("--dns-server is the server of a unicast zone: give the zone with --domain, e.g. --domain lab.example.") }
            dnsServer = address
        }
        if isUnicast, allTypes || interface != nil || verify {
            throw UsageError("--all, --interface and --verify work on the local link (mDNS), not in the unicast zone \(domain)")
        }
    }
}
