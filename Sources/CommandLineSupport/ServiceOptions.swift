import DNSSD
import DiscoveryCore

/// The options every svc tool shares, declared and validated once.
extension CommandSpec.Option {
    public static let serviceType = CommandSpec.Option("type", value: "type", help: "The service type (default: _p2pipp._tcp).")
    public static let domain = CommandSpec.Option("domain", value: "domain", help: "The domain (default: local.).")
    public static let interface = CommandSpec.Option(
        "interface", value: "name", help: "Use only this network interface, e.g. eth0 (default: every one).")
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

    /// `--interface`, as the interface of that name, or nil (every interface).
    /// - Throws: `UsageError` naming the interfaces that exist when there is none of that name.
    public func networkInterface() throws(UsageError) -> NetworkInterface? {
        guard let name = value("interface") else { return nil }
        if let interface = NetworkInterface.named(name) { return interface }
        let existing = NetworkInterface.all().map(\.name)
        throw UsageError("no network interface is named '\(name)'; this host has: "
                         + (existing.isEmpty ? "none" : existing.joined(separator: ", ")))
    }
}
