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

/// The files and environment variables the svc tools share, for their manual pages.
extension CommandSpec.Entry {
    public static let identityFile = CommandSpec.Entry("~/.config/svc/identity.pem", help: "This side's private key (ECDSA P-256, PEM, mode 0600 in a 0700 directory), made on first use; in $XDG_CONFIG_HOME/svc/ when that is set. --identity names another.")
    public static let membersFile = CommandSpec.Entry("~/.config/svc/members", help: "The room's members, one line '<key> [name]' per key (beside the identity key; --identity moves it too): keys that passed the room code, or that --admit known lets in, with the names kept for them.")
    public static let knownPeersFile = CommandSpec.Entry("~/.config/svc/known_peers", help: "The pinned keys, one line '<service> <key>' per name; in $XDG_CONFIG_HOME/svc/ when that is set.")
    public static let configHome = CommandSpec.Entry("XDG_CONFIG_HOME", help: "The directory of svc/ with the identity key (and known_peers); ~/.config when unset or not an absolute path.")
    public static let systemBus = CommandSpec.Entry("DBUS_SYSTEM_BUS_ADDRESS", help: "The D-Bus system bus on which avahi-daemon is reached (default: unix:path=/run/dbus/system_bus_socket).")
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
