import CAvahiClient
import Dispatch
import Glibc

/// What avahi-daemon's own browser reported, copied out of its callback.
enum DaemonBrowserReport: Sendable {
    /// An instance appeared (`added`) or went away on an interface.
    case found(name: String, interfaceIndex: UInt32, added: Bool)
    /// The daemon's "all for now": its caches are read and its first query window is over.
    case allForNow
    /// The browser or its daemon connection failed; no "all for now" will come.
    case failed
}

/// A service browser on avahi-daemon through its own client library (libavahi-client), kept
/// for the one report Avahi's dns_sd layer drops: `AVAHI_BROWSER_ALL_FOR_NOW`. The dns_sd
/// browse stays the source of events; this browser only says when its first batch is complete
/// (`AllForNowGate`), and is stopped as soon as that is known.
///
/// It runs Avahi's threaded poll (one thread and one D-Bus connection). Creating it blocks on
/// D-Bus round trips, so it is created on `daemonBrowserQueue`, beside the dns_sd browse.
/// - Important: `poll`, `client`, `context` and `isStopped` are used only on `daemonBrowserQueue`;
///   `report` runs on Avahi's poll thread and must hand off at once.
final class DaemonBrowser: @unchecked Sendable {
    private var poll: OpaquePointer?
    private var client: OpaquePointer?
    private var context: Unmanaged<DaemonBrowserReports>?
    private var isStopped = false

    /// Starts browsing for `regtype` in `domain` in the background; reports go to `report`,
    /// on Avahi's poll thread. A browser that cannot be created reports `.failed` (on
    /// `daemonBrowserQueue`).
    /// - Parameter interfaceIndex: one interface, or every interface (nil).
    static func start(regtype: String, domain: String, interfaceIndex: UInt32?,
                      report: @escaping @Sendable (DaemonBrowserReport) -> Void) -> DaemonBrowser {
        let browser = DaemonBrowser()
        daemonBrowserQueue.async {
            guard !browser.isStopped else { return }
            if !browser.open(regtype: regtype, domain: domain, interfaceIndex: interfaceIndex, report: report) {
                browser.close()
                report(.failed)
            }
        }
        return browser
    }

    /// Stops the browser and frees its connection; no report comes after the poll thread ends.
    /// Safe to call more than once and from any thread except Avahi's poll thread.
    func stop() {
        daemonBrowserQueue.async { [self] in
            isStopped = true
            close()
        }
    }

    private func open(regtype: String, domain: String, interfaceIndex: UInt32?,
                      report: @escaping @Sendable (DaemonBrowserReport) -> Void) -> Bool {
        let interface: AvahiIfIndex
        if let interfaceIndex {
            guard let index = AvahiIfIndex(exactly: interfaceIndex) else { return false }
            interface = index
        } else {
            interface = AvahiIfIndex(AVAHI_IF_UNSPEC)
        }
        guard let poll = avahi_threaded_poll_new() else { return false }
        self.poll = poll
        let context = Unmanaged.passRetained(DaemonBrowserReports(report))
        self.context = context
        var error: Int32 = 0
        client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), { _, state, userdata in
            guard state == AVAHI_CLIENT_FAILURE, let userdata else { return }
            Unmanaged<DaemonBrowserReports>.fromOpaque(userdata).takeUnretainedValue().report(.failed)
        }, context.toOpaque(), &error)
        guard let client else { return false }
        let browser = avahi_service_browser_new(client, interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), regtype, domain, AvahiLookupFlags(0),
                                                { _, interface, _, event, name, _, _, _, userdata in
            guard let userdata, let report = DaemonBrowserReport(event: event, name: name, interface: interface) else { return }
            Unmanaged<DaemonBrowserReports>.fromOpaque(userdata).takeUnretainedValue().report(report)
        }, context.toOpaque())
        guard browser != nil else { return false }
        return avahi_threaded_poll_start(poll) == 0
    }

    /// Ends the poll thread, then frees the client (and its browser), the poll and the context.
    private func close() {
        if let poll { avahi_threaded_poll_stop(poll) }
        if let client { avahi_client_free(client) }
        if let poll { avahi_threaded_poll_free(poll) }
        context?.release()
        (poll, client, context) = (nil, nil, nil)
    }
}

extension DaemonBrowserReport {
    /// The longest instance name accepted (a DNS label has at most 63 bytes; Avahi escapes).
    static let maximumNameBytes = 1024

    /// Copies one browser callback's values, or nil for an event the gate does not use
    /// (`AVAHI_BROWSER_CACHE_EXHAUSTED`). Names and indexes come from the network by way
    /// of the daemon: a name without a terminator within `maximumNameBytes`, or an interface
    /// index that is not one, makes the signal unusable (`.failed`) rather than guessed at.
    init?(event: AvahiBrowserEvent, name: UnsafePointer<CChar>?, interface: AvahiIfIndex) {
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            guard let name, strnlen(name, Self.maximumNameBytes + 1) <= Self.maximumNameBytes,
                  let index = UInt32(exactly: interface) else {
                self = .failed
                return
            }
            self = .found(name: String(cString: name), interfaceIndex: index, added: event == AVAHI_BROWSER_NEW)
        case AVAHI_BROWSER_ALL_FOR_NOW:
            self = .allForNow
        case AVAHI_BROWSER_FAILURE:
            self = .failed
        default:
            return nil
        }
    }
}

/// The C callbacks' context: hands each report on. Runs on Avahi's poll thread.
private final class DaemonBrowserReports: Sendable {
    let report: @Sendable (DaemonBrowserReport) -> Void
    init(_ report: @escaping @Sendable (DaemonBrowserReport) -> Void) { self.report = report }
}

/// The serial queue on which daemon browsers are created and stopped (both block on D-Bus or
/// on joining the poll thread, so not on `dnssdQueue`).
let daemonBrowserQueue = DispatchQueue(label: "svc.avahi-client")
