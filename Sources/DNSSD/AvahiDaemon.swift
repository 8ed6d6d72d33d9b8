import CAvahiClient

/// Whether avahi-daemon answers on the system bus, asked the way its client library asks.
///
/// Avahi's dns_sd layer (browses and registrations) reports a daemon that is not running, a
/// D-Bus failure and a broken connection alike as `kDNSServiceErr_Unknown`; this tells them
/// apart. (Resolves and address lookups use Avahi's client library, whose codes say which.)
public enum AvahiDaemon {
    public enum Status: Sendable, Hashable {
        /// The daemon answered (`avahi_client_new` succeeded).
        case answering
        /// No process owns the daemon's bus name (`AVAHI_ERR_NO_DAEMON`): it is not running.
        case absent
        /// It could not be asked: the D-Bus connection or call failed (e.g. the bus's
        /// connection limit), with Avahi's reason.
        case unreachable(reason: String)
    }

    /// How long avahi-daemon's service and host name resolvers wait for answers before they
    /// give up (`TIMEOUT_MSEC` in avahi-core's resolve-service.c) with `AVAHI_ERR_TIMEOUT`:
    /// a resolve with a longer timeout ends then, saying so.
    public static let resolverLimit: Duration = .seconds(5)

    /// Connects to the daemon and disconnects at once. Blocks for the D-Bus round trips
    /// (milliseconds, up to D-Bus's call timeout for a bus that does not answer): only for
    /// error paths.
    public static func probe() -> Status {
        guard let poll = avahi_simple_poll_new() else { return .unreachable(reason: "out of memory") }
        defer { avahi_simple_poll_free(poll) }
        var error: Int32 = 0
        // Nothing runs the poll: the client is freed before any state change could be reported.
        guard let client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, nil, &error) else {
            if error == AVAHI_ERR_NO_DAEMON { return .absent }
            return .unreachable(reason: avahi_strerror(error).map { String(cString: $0) } ?? "error \(error)")
        }
        avahi_client_free(client)
        return .answering
    }
}
