import CommandLineSupport
import DiscoveryCore

/// svc-browse's validated command line.
struct BrowseOptions: Sendable {
    var type: ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    /// Every service type on the network (`--all`) instead of `type`.
    var allTypes = false
    var interface: NetworkInterface?
    var resolve = false
    var verify = false
    var once = false
    var timeout: Duration?
    var json = false

    static let spec = CommandSpec(
        name: "svc-browse",
        version: svcVersion,
        overview: "List DNS-SD services on the local network, live, as they come and go.",
        options: [
            .serviceType,
            .domain,
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
              When the reader of standard output goes away ('svc-browse | head -1'), it
              exits 0.

            \(ExitCode.table)

            EXAMPLES:
              svc-browse --once --resolve
              svc-browse --type _http._tcp --json
              svc-browse --all --once --interface eth0
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
    }
}
