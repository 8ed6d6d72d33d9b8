/// An error from the DNS-SD daemon, or from waiting for it. `message` tells the user what
/// happened and what to do about it; `rawValue` keeps the daemon's code, if any.
public struct DNSSDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure. A struct over a private enum, so codes can be added later.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case busUnreachable, daemonUnreachable, nameConflict, noSuchName, timedOut
            case badParameter, unsupported, refused, noMemory, internalError, other
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The D-Bus system bus socket does not accept connections.
        public static let busUnreachable = Code(.busUnreachable)
        /// The bus is up but no avahi-daemon answers on it (or it went away).
        public static let daemonUnreachable = Code(.daemonUnreachable)
        /// `kDNSServiceErr_NameConflict`, or a rename refused by the `.fail` policy.
        public static let nameConflict = Code(.nameConflict)
        /// `kDNSServiceErr_NoSuchName` / `NoSuchRecord`: nothing answered for that name.
        public static let noSuchName = Code(.noSuchName)
        /// The daemon did not answer within the operation's timeout.
        public static let timedOut = Code(.timedOut)
        /// `kDNSServiceErr_BadParam`, `BadInterfaceIndex`, `Invalid`.
        public static let badParameter = Code(.badParameter)
        /// `kDNSServiceErr_Unsupported`: not available in Avahi's compatibility layer.
        public static let unsupported = Code(.unsupported)
        /// `kDNSServiceErr_Refused`, `NoAuth`, `Firewall`.
        public static let refused = Code(.refused)
        /// `kDNSServiceErr_NoMemory`.
        public static let noMemory = Code(.noMemory)
        /// `kDNSServiceErr_BadReference`, `BadState`, `BadFlags`, `NotInitialized`: a bug here.
        public static let internalError = Code(.internalError)
        /// Any other code.
        public static let other = Code(.other)

        public var description: String { "\(value)" }
    }

    public let code: Code
    public let message: String
    /// The code the daemon returned, when there was one: a `kDNSServiceErr_*` value (-65537
    /// and below: browses and registrations, through Avahi's dns_sd layer) or an
    /// `AVAHI_ERR_*` value (-1 to -53: resolves and address lookups, through its client library).
    public let rawValue: Int32?

    public init(_ code: Code, _ message: String, rawValue: Int32? = nil) {
        self.code = code
        self.message = message
        self.rawValue = rawValue
    }

    public var description: String { message }

    /// Whether the daemon or its bus is out of reach (worth retrying once it is back).
    public var isDaemonUnavailable: Bool { code == .busUnreachable || code == .daemonUnreachable }

    /// What to say when a running operation loses the daemon (`isDaemonUnavailable`): most
    /// often avahi-daemon or D-Bus is being restarted, so this says so instead of telling
    /// the user to install anything; other errors give their `message`.
    public var lostMessage: String {
        switch code {
        case .daemonUnreachable: "avahi-daemon stopped answering: it is restarting, or was stopped"
        case .busUnreachable: "the D-Bus system bus stopped answering: it is restarting, or was stopped, and avahi-daemon is reached through it"
        default: message
        }
    }

    /// Maps a `kDNSServiceErr_*` value to an error that says what to do, asking the bus and
    /// the daemon what they are (`SystemBus.probe()`, and `AvahiDaemon.probe()` only for
    /// `kDNSServiceErr_Unknown` and the refusals on a reachable bus). Blocks for those round trips: error paths only.
    /// - Parameter took: how long the failing call took: `kDNSServiceErr_Unknown` after
    ///   `AvahiDaemon.noReplyAfter` or more is a daemon that did not answer, told without asking
    ///   it again (which would take as long).
    static func reported(_ rawValue: Int32, while operation: String, took: Duration = .zero) -> DNSSDError {
        daemon(rawValue, while: operation, bus: SystemBus.probe(), took: took, daemon: AvahiDaemon.probe)
    }

    /// Maps a `kDNSServiceErr_*` value to an error that says what to do.
    ///
    /// Avahi's dns_sd layer reports as `kDNSServiceErr_Unknown` a bus it cannot reach, a
    /// daemon that is not running, a D-Bus failure (e.g. the bus's connection limit) and a
    /// daemon connection that broke (a restart). `bus` and `daemon` tell these apart.
    /// (Resolves and address lookups go through Avahi's client library, whose codes say
    /// which: `daemon(_:while:)` with a `DaemonFailure`.)
    /// - Parameters:
    ///   - rawValue: the code returned by a `DNSService*` call or passed to its callback.
    ///   - operation: what was being done, e.g. "registering 'printer' as _p2pipp._tcp".
    ///   - bus: whether the system bus accepted a connection, and at which address.
    ///   - took: how long the failing call took. Avahi's client library reports a daemon that
    ///     did not answer within D-Bus's reply timeout (25 s) as not running
    ///     (`AVAHI_ERR_NO_DAEMON`, and so `kDNSServiceErr_Unknown`), but D-Bus says at once
    ///     that no daemon owns its name: `kDNSServiceErr_Unknown` after
    ///     `AvahiDaemon.noReplyAfter` or more is a daemon that is there and does not answer.
    ///   - daemon: asks whether avahi-daemon answers on that bus; called only for
    ///     `kDNSServiceErr_Unknown` and `Refused`/`NoAuth`/`Firewall` on a reachable bus.
    public static func daemon(_ rawValue: Int32, while operation: String, bus: SystemBus.Status, took: Duration = .zero,
                              daemon: () -> AvahiDaemon.Status) -> DNSSDError {
        let name = errorNames[rawValue].map { "kDNSServiceErr_\($0)" } ?? "error"
        let tail = " (\(name), \(rawValue))"
        switch rawValue {
        case -65537 where took >= AvahiDaemon.noReplyAfter:
            if case .reachable(let address) = bus { return notAnswering(while: operation, within: took, busAddress: address, rawValue: rawValue) }
            return notAnswering(while: operation, within: took, rawValue: rawValue)
        case -65537: // Unknown: Avahi's answer when the daemon or the bus cannot be reached
            switch bus {
            case .outOfFileDescriptors(let reason):
                return DNSSDError(.other, """
                    too many open files (\(reason)) while \(operation): each request to avahi-daemon needs \
                    file descriptors; raise the limit ('ulimit -n') or run fewer requests at once
                    """, rawValue: rawValue)
            case .unreachable(let address, let reason):
                return DNSSDError(.busUnreachable, """
                    cannot reach the D-Bus system bus at \(address): \(reason); avahi-daemon is reached \
                    over D-Bus, so \(operation) failed. Start D-Bus with 'service dbus start' and then \
                    avahi-daemon with 'service avahi-daemon start', or set DBUS_SYSTEM_BUS_ADDRESS to the bus \
                    your avahi-daemon uses
                    """, rawValue: rawValue)
            case .reachable(let address):
                return unknown(while: operation, busAddress: address, daemon: daemon(), tail: tail)
            }
        case -65548:
            return DNSSDError(.nameConflict, "the name is already taken on the network while \(operation)\(tail); choose another name", rawValue: rawValue)
        case -65538, -65554:
            return DNSSDError(.noSuchName, "nothing on the network answered while \(operation)\(tail); check the name, type and domain", rawValue: rawValue)
        case -65540, -65552, -65549:
            return DNSSDError(.badParameter, "avahi-daemon rejected a parameter while \(operation)\(tail); check the name, type, domain and TXT record", rawValue: rawValue)
        case -65544:
            return DNSSDError(.unsupported, "avahi-daemon's dns_sd layer does not support \(operation)\(tail)", rawValue: rawValue)
        case -65553, -65555, -65550:
            // Avahi's client library gives TOO_MANY_OBJECTS for the bus's own refusal of one more
            // connection (D-Bus LimitsExceeded: many clients at once), and the dns_sd layer
            // makes that Refused: only the daemon, asked again, tells it from a policy.
            if case .reachable(let address) = bus, case .unreachable(let reason) = daemon() {
                return DNSSDError(.refused, """
                    avahi-daemon could not be asked over the D-Bus system bus at \(address): \(reason), so \
                    \(operation) failed\(tail). With many clients at once this is the bus's limit of \
                    connections per user (max_connections_per_user, 256 by default) or the daemon's of \
                    clients: end some of them, or try again
                    """, rawValue: rawValue)
            }
            return DNSSDError(.refused, "avahi-daemon refused the request while \(operation)\(tail); check its configuration, e.g. disallowed interfaces or a policy", rawValue: rawValue)
        case -65539:
            return DNSSDError(.noMemory, "avahi-daemon ran out of memory while \(operation)\(tail); restart it", rawValue: rawValue)
        case -65541, -65542, -65543, -65545:
            return DNSSDError(.internalError, "internal error while \(operation)\(tail); this is a bug in svc, please report it", rawValue: rawValue)
        default:
            return DNSSDError(.other, "avahi-daemon failed while \(operation)\(tail)", rawValue: rawValue)
        }
    }

    /// `kDNSServiceErr_Unknown` with a reachable bus: what the daemon itself says tells a
    /// stopped daemon from a D-Bus failure and a restart.
    private static func unknown(while operation: String, busAddress address: String, daemon: AvahiDaemon.Status,
                                tail: String) -> DNSSDError {
        let rawValue: Int32 = -65537
        switch daemon {
        case .absent:
            return DNSSDError(.daemonUnreachable, """
                avahi-daemon is not running: the D-Bus system bus at \(address) is up but no avahi-daemon \
                answers on it, so \(operation) failed. Start avahi-daemon with 'service avahi-daemon start' \
                or 'avahi-daemon -D'; install it with 'apt install avahi-daemon' if it is missing
                """, rawValue: rawValue)
        case .unreachable(let reason):
            return DNSSDError(.daemonUnreachable, """
                avahi-daemon could not be asked over the D-Bus system bus at \(address): \(reason), so \
                \(operation) failed\(tail). The bus accepts connections, so the daemon may well be running: \
                with many clients at once the bus's connection limit may be reached; try again, and run \
                'svc-doctor' if it persists
                """, rawValue: rawValue)
        case .notAnswering(let after):
            return notAnswering(while: operation, within: after, busAddress: address, rawValue: rawValue)
        case .answering:
            return DNSSDError(.daemonUnreachable, """
                avahi-daemon runs, but \(operation) failed\(tail): Avahi's dns_sd layer says so when its \
                connection to the daemon broke (the daemon was restarted meanwhile) or could not be made \
                (no thread or D-Bus connection for it); try again
                """, rawValue: rawValue)
        }
    }

    /// The C names of the `kDNSServiceErr_*` values, without the prefix.
    static let errorNames: [Int32: String] = [
        -65537: "Unknown", -65538: "NoSuchName", -65539: "NoMemory", -65540: "BadParam",
        -65541: "BadReference", -65542: "BadState", -65543: "BadFlags", -65544: "Unsupported",
        -65545: "NotInitialized", -65547: "AlreadyRegistered", -65548: "NameConflict",
        -65549: "Invalid", -65550: "Firewall", -65551: "Incompatible", -65552: "BadInterfaceIndex",
        -65553: "Refused", -65554: "NoSuchRecord", -65555: "NoAuth", -65556: "NoSuchKey",
        -65557: "NATTraversal", -65558: "DoubleNAT", -65559: "BadTime",
    ]

    /// avahi-daemon did not answer a D-Bus call within `wait` (our deadline, or D-Bus's reply
    /// timeout): it is there (a daemon that is not running is reported by D-Bus at once) but
    /// hung, stopped or overloaded, or the bus itself is. Code `.timedOut`.
    /// - Parameters:
    ///   - operation: what was being done, e.g. "browsing for _p2pipp._tcp in local.".
    ///   - busAddress: the system bus's address (`SystemBus.socketPath` by default).
    public static func notAnswering(while operation: String, within wait: Duration, busAddress: String = SystemBus.socketPath,
                                    rawValue: Int32? = nil) -> DNSSDError {
        DNSSDError(.timedOut, """
            avahi-daemon did not answer over the D-Bus system bus at \(busAddress) within \(wait.secondsText), so \(operation) \
            failed: it runs (D-Bus reports one that does not at once) but is hung, stopped or overloaded, or the bus \
            itself is. Check it with 'avahi-browse -a -t' or 'systemctl status avahi-daemon', and restart it with \
            'service avahi-daemon restart'
            """, rawValue: rawValue)
    }

    static func timedOut(_ operation: String, after timeout: Duration) -> DNSSDError {
        DNSSDError(.timedOut, "avahi-daemon gave no answer within \(timeout.secondsText) while \(operation); if it is overloaded or stuck, restart it with 'service avahi-daemon restart'")
    }
}
