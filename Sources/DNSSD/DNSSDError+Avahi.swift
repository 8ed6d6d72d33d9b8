import CAvahiClient

extension DNSSDError {
    /// Maps a failure of a lookup through Avahi's client library (`DaemonClient`: resolves and
    /// address lookups) to an error that says what to do. Avahi's own codes tell apart what
    /// its dns_sd layer reported alike (`kDNSServiceErr_Unknown`): no daemon
    /// (`AVAHI_ERR_NO_DAEMON`), a connection that broke (`AVAHI_ERR_DISCONNECTED`), a
    /// resolver's own timeout (`AVAHI_ERR_TIMEOUT`), a D-Bus failure.
    /// - Parameters:
    ///   - failure: the stage, the `AVAHI_ERR_*` code and, when it was asked, the bus.
    ///   - operation: what was being done, e.g. "resolving 'printer' of type _p2pipp._tcp in local.".
    static func daemon(_ failure: DaemonFailure, while operation: String) -> DNSSDError {
        let code = failure.code
        let name = avahiErrorNames[code].map { "AVAHI_ERR_\($0)" } ?? "Avahi error"
        let tail = " (\(name), \(code))"
        let reason = avahi_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        func error(_ kind: Code, _ message: String) -> DNSSDError { DNSSDError(kind, message, rawValue: code) }

        switch failure.bus {
        case .outOfFileDescriptors(let why)?:
            return error(.other, """
                too many open files (\(why)) while \(operation): a request to avahi-daemon needs file \
                descriptors; raise the limit ('ulimit -n') or run fewer requests at once
                """)
        case .unreachable(let address, let why)? where failure.stage == .connecting:
            return error(.busUnreachable, """
                cannot reach the D-Bus system bus at \(address): \(why); avahi-daemon is reached \
                over D-Bus, so \(operation) failed. Start D-Bus with 'service dbus start' and then \
                avahi-daemon with 'service avahi-daemon start', or set DBUS_SYSTEM_BUS_ADDRESS to the bus \
                your avahi-daemon uses
                """)
        case .unreachable(let address, _)?:
            return error(.busUnreachable, """
                the D-Bus system bus at \(address) stopped while \(operation)\(tail): it was stopped, or \
                is restarting, and avahi-daemon is reached through it. Try again once it is back; if it \
                does not come back, start it with 'service dbus start' and then avahi-daemon with \
                'service avahi-daemon start'
                """)
        case .reachable, nil:
            break
        }

        let stopped = error(.daemonUnreachable, """
            avahi-daemon stopped while \(operation)\(tail): it was stopped, or is restarting. Try again \
            once it runs; if it does not come back, start it with 'service avahi-daemon start' or \
            'avahi-daemon -D'
            """)
        switch (failure.stage, Int(code)) {
        case (_, AVAHI_ERR_NO_MEMORY):
            return error(.noMemory, "out of memory while \(operation)\(tail)")
        case (.connecting, AVAHI_ERR_NO_DAEMON) where failure.took >= AvahiDaemon.noReplyAfter:
            // Avahi's client library says "no daemon" also when the daemon's answer did not
            // come within D-Bus's reply timeout; D-Bus itself says so at once.
            return notAnswering(while: operation, within: failure.took, busAddress: busAddress(failure), rawValue: code)
        case (.connecting, AVAHI_ERR_NO_DAEMON):
            return error(.daemonUnreachable, """
                avahi-daemon is not running: the D-Bus system bus at \(busAddress(failure)) is up but no avahi-daemon \
                answers on it, so \(operation) failed. Start avahi-daemon with 'service avahi-daemon start' \
                or 'avahi-daemon -D'; install it with 'apt install avahi-daemon' if it is missing
                """)
        case (.connecting, AVAHI_ERR_TOO_MANY_OBJECTS), (.connecting, AVAHI_ERR_TOO_MANY_CLIENTS):
            // Avahi's client library gives TOO_MANY_OBJECTS for the bus's own refusal of one more
            // connection (D-Bus LimitsExceeded: many clients at once).
            return error(.refused, """
                avahi-daemon could not be asked over the D-Bus system bus at \(busAddress(failure)): \(reason), so \
                \(operation) failed\(tail). With many clients at once this is the bus's limit of \
                connections per user (max_connections_per_user, 256 by default) or the daemon's of \
                clients: end some of them, or try again
                """)
        case (.connecting, _):
            return error(.daemonUnreachable, """
                avahi-daemon could not be asked over the D-Bus system bus at \(busAddress(failure)): \(reason), so \
                \(operation) failed\(tail). The bus accepts connections, so the daemon may well be running: \
                with many clients at once the bus's connection limit may be reached; try again, and run \
                'svc-doctor' if it persists
                """)
        case (_, AVAHI_ERR_DISCONNECTED), (_, AVAHI_ERR_NO_DAEMON), (_, AVAHI_ERR_BAD_STATE), (_, AVAHI_ERR_DBUS_ERROR):
            return stopped
        case (.starting, AVAHI_ERR_TOO_MANY_OBJECTS):
            return error(.refused, """
                avahi-daemon refused one more lookup while \(operation)\(tail): this program has as many \
                open as the daemon allows one client (objects-per-client-max in avahi-daemon.conf); try \
                again when fewer run
                """)
        case (_, AVAHI_ERR_ACCESS_DENIED), (_, AVAHI_ERR_NOT_PERMITTED), (_, AVAHI_ERR_TOO_MANY_OBJECTS), (_, AVAHI_ERR_TOO_MANY_CLIENTS):
            return error(.refused, "avahi-daemon refused the request while \(operation)\(tail): \(reason); check its configuration, e.g. disallowed interfaces or a policy")
        case (.running, AVAHI_ERR_TIMEOUT):
            return error(.noSuchName, """
                nothing on the network answered while \(operation): avahi-daemon runs and gave up after \
                its own \(AvahiDaemon.resolverLimit.secondsText) limit\(tail); check the name, type and \
                domain, and that the service is published
                """)
        case (.running, AVAHI_ERR_NOT_FOUND), (.running, AVAHI_ERR_DNS_NXDOMAIN):
            return error(.noSuchName, "nothing on the network answered while \(operation)\(tail); check the name, type and domain")
        case (_, let code) where Self.avahiParameterErrors.contains(code):
            return error(.badParameter, "avahi-daemon rejected a parameter while \(operation)\(tail): \(reason); check the name, type and domain")
        default:
            return error(.other, "avahi-daemon failed while \(operation)\(tail): \(reason)")
        }
    }

    private static func busAddress(_ failure: DaemonFailure) -> String {
        if case .reachable(let address)? = failure.bus { return address }
        return SystemBus.socketPath
    }

    /// The codes for a name, type, interface or flag the daemon does not take.
    static let avahiParameterErrors: Set<Int> = [
        AVAHI_ERR_INVALID_HOST_NAME, AVAHI_ERR_INVALID_DOMAIN_NAME, AVAHI_ERR_IS_PATTERN, AVAHI_ERR_INVALID_SERVICE_NAME,
        AVAHI_ERR_INVALID_SERVICE_TYPE, AVAHI_ERR_INVALID_INTERFACE, AVAHI_ERR_INVALID_PROTOCOL, AVAHI_ERR_INVALID_FLAGS,
        AVAHI_ERR_INVALID_SERVICE_SUBTYPE, AVAHI_ERR_INVALID_DNS_CLASS, AVAHI_ERR_INVALID_DNS_TYPE, AVAHI_ERR_INVALID_ARGUMENT,
    ]

    /// The C names of the `AVAHI_ERR_*` values, without the prefix.
    static let avahiErrorNames: [Int32: String] = [
        -1: "FAILURE", -2: "BAD_STATE", -3: "INVALID_HOST_NAME", -4: "INVALID_DOMAIN_NAME", -5: "NO_NETWORK",
        -6: "INVALID_TTL", -7: "IS_PATTERN", -8: "COLLISION", -9: "INVALID_RECORD", -10: "INVALID_SERVICE_NAME",
        -11: "INVALID_SERVICE_TYPE", -12: "INVALID_PORT", -13: "INVALID_KEY", -14: "INVALID_ADDRESS", -15: "TIMEOUT",
        -16: "TOO_MANY_CLIENTS", -17: "TOO_MANY_OBJECTS", -18: "TOO_MANY_ENTRIES", -19: "OS", -20: "ACCESS_DENIED",
        -21: "INVALID_OPERATION", -22: "DBUS_ERROR", -23: "DISCONNECTED", -24: "NO_MEMORY", -25: "INVALID_OBJECT",
        -26: "NO_DAEMON", -27: "INVALID_INTERFACE", -28: "INVALID_PROTOCOL", -29: "INVALID_FLAGS", -30: "NOT_FOUND",
        -31: "INVALID_CONFIG", -32: "VERSION_MISMATCH", -33: "INVALID_SERVICE_SUBTYPE", -34: "INVALID_PACKET",
        -35: "INVALID_DNS_ERROR", -36: "DNS_FORMERR", -37: "DNS_SERVFAIL", -38: "DNS_NXDOMAIN", -39: "DNS_NOTIMP",
        -40: "DNS_REFUSED", -41: "DNS_YXDOMAIN", -42: "DNS_YXRRSET", -43: "DNS_NXRRSET", -44: "DNS_NOTAUTH",
        -45: "DNS_NOTZONE", -46: "INVALID_RDATA", -47: "INVALID_DNS_CLASS", -48: "INVALID_DNS_TYPE", -49: "NOT_SUPPORTED",
        -50: "NOT_PERMITTED", -51: "INVALID_ARGUMENT", -52: "IS_EMPTY", -53: "NO_CHANGE",
    ]
}
