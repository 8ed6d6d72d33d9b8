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
        /// Its bus name has an owner, but no answer came within D-Bus's reply timeout: it is
        /// hung, stopped or overloaded (Avahi's client library says `AVAHI_ERR_NO_DAEMON`, but
        /// only `after` `noReplyAfter` or more).
        case notAnswering(after: Duration)
    }

    /// How long a D-Bus call to the daemon may take before its failure means "did not answer"
    /// rather than "not running". D-Bus answers at once for a name nobody owns, and a running
    /// daemon within milliseconds; a daemon that does not answer fails a call only at D-Bus's
    /// reply timeout (25 s; measured on the virtual LAN with the daemon stopped by SIGSTOP:
    /// `avahi_client_new` and `DNSServiceBrowse` each failed after 25.0 s, with
    /// `AVAHI_ERR_NO_DAEMON` and `kDNSServiceErr_Unknown`).
    public static let noReplyAfter: Duration = .seconds(5)

    /// How long avahi-daemon's service and host name resolvers wait for answers before they
    /// give up (`TIMEOUT_MSEC` in avahi-core's resolve-service.c) with `AVAHI_ERR_TIMEOUT`:
    /// a resolve with a longer timeout ends then, saying so.
    public static let resolverLimit: Duration = .seconds(5)

    /// Connects to the daemon and disconnects at once. Blocks for the D-Bus round trips
    /// (milliseconds, up to D-Bus's 25 s reply timeout for a daemon or bus that does not
    /// answer): only for error paths.
    public static func probe() -> Status {
        guard let poll = avahi_simple_poll_new() else { return .unreachable(reason: "out of memory") }
        defer { avahi_simple_poll_free(poll) }
        var error: Int32 = 0
        let started = ContinuousClock.now
        // Nothing runs the poll: the client is freed before any state change could be reported.
        guard let client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, nil, &error) else {
            let took = ContinuousClock.now - started
            if error == AVAHI_ERR_NO_DAEMON { return took >= noReplyAfter ? .notAnswering(after: took) : .absent }
            return .unreachable(reason: avahi_strerror(error).map { String(cString: $0) } ?? "error \(error)")
        }
        avahi_client_free(client)
        return .answering
    }
}
