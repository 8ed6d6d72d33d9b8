import CommandLineSupport
import DNSSD
import DiscoveryCore

/// svc-publish's validated command line.
struct PublishOptions: Sendable {
    var name: InstanceName?
    var type: ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    var port: UInt16 = 0
    var txt = TXTRecord()
    var conflictPolicy: ConflictPolicy = .rename
    var json = false

    static let spec = CommandSpec(
        name: "svc-publish",
        version: svcVersion,
        overview: "Serve on a TCP port and publish it with DNS-SD so peers can find it by name.",
        options: [
            .init("name", value: "name", help: "The instance name, 1 to 63 bytes of UTF-8 (default: the host name)."),
            .serviceType,
            .domain,
            .init("port", value: "port", help: "The TCP port to listen on (default: 0, any free port)."),
            .init("txt", value: "key=value", repeatable: true, help: "A TXT record item: key=value, key= or key alone."),
            .init("conflict", value: "policy", help: "When the name is taken: rename (default) or fail."),
            .json,
        ],
        discussion: """
            Listens on IPv6 and IPv4, registers the service, and prints the registered name
            once the daemon confirms it (the daemon may rename it, e.g. 'name #2'). Greets
            every client with 'hello from <name>', prints what clients send, and sends each
            line of standard input to every connected client. End of input does not stop it;
            SIGINT or SIGTERM withdraws the service and exits 0.

            OUTPUT:
              registered "<name>" <type> <domain> port <port>
              connected #<n> from <address>   greeting #<n>: <text>   message #<n>: <text>
              disconnected #<n> (<reason>)
              With --json, the same events as JSON objects with "event" and "time".

            EXIT STATUS:
              0 stopped by a signal, 64 bad arguments, 69 avahi-daemon or D-Bus unreachable,
              71 cannot listen, 73 name taken with --conflict fail, 75 no confirmation in time.

            EXAMPLES:
              svc-publish --name "Living room" --txt version=1
              svc-publish --port 4242 --conflict fail --json
            """)

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        if let text = parsed.value("name") { name = try validated { () throws(DiscoveryError) in try InstanceName(text) } }
        type = try parsed.serviceType()
        domain = try parsed.domain()
        if let text = parsed.value("port") { port = try parsePort(text, option: "port") }
        let items = parsed.values("txt")
        txt = try validated { () throws(DiscoveryError) in try TXTRecord(items: items) }
        if let text = parsed.value("conflict") {
            guard let policy = ConflictPolicy(rawValue: text) else {
                throw UsageError("--conflict takes 'rename' or 'fail', not '\(text)'")
            }
            conflictPolicy = policy
        }
        json = parsed.flag("json")
    }
}
