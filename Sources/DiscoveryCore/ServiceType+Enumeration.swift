extension ServiceType {
    /// The type browsed to enumerate the service types in a domain (RFC 6763 §9): its PTR
    /// records name one service type each, e.g. `_http._tcp.local.`.
    public static let enumerationType = "_services._dns-sd._udp"

    /// The service type named by one record of a type enumeration, as `DNSServiceBrowse`
    /// reports it: the PTR target's first label as the instance name (`_http`) and its second
    /// as the type (`_tcp.`); the rest is the domain.
    ///
    /// The record comes from the network: anything but one valid RFC 6335 service name and
    /// `_tcp` or `_udp` (no subtypes, dots or commas hidden in a label) is rejected.
    /// - Throws: `DiscoveryError` with code `.invalidServiceType`.
    public init(enumeratedName name: String, protocol transport: String) throws(DiscoveryError) {
        var transportLabel = transport
        if transportLabel.hasSuffix(".") { transportLabel.removeLast() }
        guard !name.contains(where: { $0 == "." || $0 == "," }), !transportLabel.contains(where: { $0 == "." || $0 == "," }) else {
            throw DiscoveryError(.invalidServiceType,
                                 "invalid service type '\(name).\(transport)' in a type enumeration: a label holds a dot or a comma")
        }
        try self.init(name + "." + transportLabel)
    }
}
