import CommandLineSupport
import DiscoveryCore

/// svc-connect's validated command line.
struct ConnectOptions: Sendable {
    var name: String
    var type: ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    var timeout: Duration = .seconds(5)
    var message: String?

    static let spec = CommandSpec(
        name: "svc-connect",
        version: svcVersion,
        overview: "Find a published service by name, connect to it, and exchange lines of text.",
        arguments: [.init("name", help: "The instance name, exactly as svc-browse shows it.")],
        options: [
            .serviceType,
            .domain,
            .init("timeout", value: "seconds", help: "How long finding and connecting may take (default: 5)."),
            .init("message", value: "text", help: "Send this one line, print the replies, and exit."),
        ],
        discussion: """
            Resolves the name, tries every address of the host (IPv6 and IPv4, raced as in
            Happy Eyeballs) and says on standard error which one answered first. After the
            greetings, each line of standard input is sent and every line received is printed;
            it exits when the server closes the connection or standard input ends.

            EXIT STATUS:
              0 done, 64 bad arguments, 68 no service of that name, 69 avahi-daemon or D-Bus
              unreachable or the service refused the connection, 74 the connection broke,
              75 no answer in time.

            EXAMPLES:
              svc-connect "Living room"
              svc-connect "Living room" --message "hello" --timeout 2
            """)

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        name = parsed.positionals[0]
        _ = try validated { () throws(DiscoveryError) in try InstanceName(name) }
        type = try parsed.serviceType()
        domain = try parsed.domain()
        if let text = parsed.value("timeout") { timeout = try parseSeconds(text, option: "timeout") }
        message = parsed.value("message")
        if let message, message.contains("\n") { throw UsageError("--message takes one line; it may not contain a newline") }
    }
}
