import DiscoveryCore

/// The daemon connection of a long-lived operation went away, or came back.
public enum DaemonStatus: Sendable, Hashable {
    case lost(DNSSDError)
    case restored
}

/// Browses for instances of a service type (`DNSServiceBrowse`), as a stream of events about
/// logical instances: Avahi's per-interface, per-protocol reports are merged (`BrowseMerger`).
///
/// `.completeForNow` ends the first batch at the earlier of: avahi-daemon's own "all for now"
/// (read through its client library, since the dns_sd layer drops it) once every instance the
/// daemon found is listed; or `quietPeriod` without a report, never before `minimumWait`.
public struct ServiceBrowser: Sendable {
    public var type: ServiceType
    public var domain: ServiceDomain
    /// Browse on this interface only, or on every interface (nil).
    public var interface: NetworkInterface?
    /// How long no report may arrive before `.completeForNow` is sent.
    public var quietPeriod: Duration
    /// `.completeForNow` is never sent earlier than this after the start, so that hosts whose
    /// answers are not cached yet have time to reply to the first query.
    public var minimumWait: Duration

    public init(type: ServiceType = .p2pipp, domain: ServiceDomain = .local, interface: NetworkInterface? = nil,
                quietPeriod: Duration = .milliseconds(200), minimumWait: Duration = .milliseconds(350)) {
        self.type = type
        self.domain = domain
        self.interface = interface
        self.quietPeriod = quietPeriod
        self.minimumWait = minimumWait
    }

    /// Starts browsing.
    ///
    /// When avahi-daemon goes away the stream stays open: `onDaemonStatus` is told, the
    /// browse is re-created with backoff, and instances that did not come back are removed.
    /// The browse stops when the stream is dropped or its consuming task is cancelled.
    ///
    /// Starting waits for avahi-daemon to take the browse (D-Bus round trips: milliseconds, but
    /// up to D-Bus's 25 s reply timeout when the daemon is hung or stopped); cancel the task to
    /// stop waiting (e.g. at a deadline), and a browse the daemon takes after that is cancelled.
    /// - Parameter onDaemonStatus: called on an internal queue when the daemon is lost or back.
    /// - Throws: `DNSSDError` when the daemon cannot be reached (at once when it is not running),
    ///   or `CancellationError`.
    public func start(onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void = { _ in }) async throws -> AsyncThrowingStream<BrowseEvent, any Error> {
        let request = BrowseRequest(regtype: type.description, domain: domain, interface: interface,
                                    operation: "browsing for \(type) in \(domain)", quietPeriod: quietPeriod, minimumWait: minimumWait,
                                    usesDaemonAllForNow: true)
        let (type, domain) = (type, domain)
        return try await BrowseCore<ServiceInstance>.start(request, onDaemonStatus: onDaemonStatus) { name, _, reportedDomain in
            ServiceInstance(name: name, type: type, domain: reportedDomain.map(ServiceDomain.init(reported:)) ?? domain)
        }
    }
}
