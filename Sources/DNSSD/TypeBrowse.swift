import DiscoveryCore

/// Enumerates the service types in a domain (RFC 6763 §9: `DNSServiceBrowse` for
/// `_services._dns-sd._udp`), as a stream of events about types: each type is added once,
/// whatever the number of hosts, interfaces and IP protocols that announce it, and removed
/// when the last of them is gone.
///
/// Types come from the network: a report that is not one valid `_name._tcp` or `_name._udp`
/// in the browsed domain (`ServiceType(enumeratedName:protocol:)`) is ignored.
public struct ServiceTypeBrowser: Sendable {
    /// The domain whose types are listed; a type reported in another one is ignored.
    public var domain: ServiceDomain
    /// Browse on this interface only, or on every interface (nil).
    public var interface: NetworkInterface?
    /// How long no report may arrive before `.completeForNow` is sent.
    public var quietPeriod: Duration
    /// `.completeForNow` is never sent earlier than this after the start.
    public var minimumWait: Duration

    public init(domain: ServiceDomain = .local, interface: NetworkInterface? = nil,
                quietPeriod: Duration = .milliseconds(200), minimumWait: Duration = .milliseconds(350)) {
        self.domain = domain
        self.interface = interface
        self.quietPeriod = quietPeriod
        self.minimumWait = minimumWait
    }

    /// Starts enumerating; behaves like `ServiceBrowser.start` when the daemon goes away.
    /// - Parameter onDaemonStatus: called on an internal queue when the daemon is lost or back.
    /// - Throws: `DNSSDError` when the daemon cannot be reached, or `CancellationError` when the
    ///   task is cancelled before the daemon took the browse.
    public func start(onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void = { _ in }) async throws -> AsyncThrowingStream<ServiceTypeEvent, any Error> {
        let request = BrowseRequest(regtype: ServiceType.enumerationType, domain: domain, interface: interface,
                                    operation: "listing the service types in \(domain)", quietPeriod: quietPeriod, minimumWait: minimumWait,
                                    usesDaemonAllForNow: false)
        let domain = domain
        return try await BrowseCore<ServiceType>.start(request, onDaemonStatus: onDaemonStatus) { name, regtype, reportedDomain in
            guard let regtype, (try? ServiceDomain(reportedDomain ?? domain.name)) == domain else { return nil }
            return try? ServiceType(enumeratedName: name, protocol: regtype)
        }
    }
}
