import DiscoveryCore

/// The options every svc tool shares, declared and validated once.
extension CommandSpec.Option {
    public static let serviceType = CommandSpec.Option("type", value: "type", help: "The service type (default: _p2pipp._tcp).")
    public static let domain = CommandSpec.Option("domain", value: "domain", help: "The domain (default: local.).")
    public static let json = CommandSpec.Option("json", help: "Print one JSON object per event (JSON Lines).")
}

extension ParsedCommandLine {
    /// `--type`, validated, or `_p2pipp._tcp`.
    public func serviceType() throws(UsageError) -> ServiceType {
        guard let text = value("type") else { return .p2pipp }
        return try validated { () throws(DiscoveryError) in try ServiceType(text) }
    }

    /// `--domain`, validated, or `local.`.
    public func domain() throws(UsageError) -> ServiceDomain {
        guard let text = value("domain") else { return .local }
        return try validated { () throws(DiscoveryError) in try ServiceDomain(text) }
    }
}
