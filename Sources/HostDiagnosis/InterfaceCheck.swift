/// Why Avahi would or would not announce and browse on an interface.
public enum InterfaceUse: Sendable, Hashable {
    case used
    case down
    case noAddress
    case noMulticast
    case pointToPoint
    case excludedByConfig
    case noEnabledProtocol

    /// Decides like avahi-daemon (iface-linux.c): the interface must be up, have MULTICAST,
    /// not be point-to-point (unless `allow-point-to-point`), be allowed by
    /// `allow-interfaces`/`deny-interfaces`, and have an address of an enabled protocol.
    public init(_ facts: NetworkInterfaceFacts, config: AvahiConfig) {
        if !facts.isUp { self = .down }
        else if facts.addresses.isEmpty { self = .noAddress }
        else if !config.allows(facts.name) { self = .excludedByConfig }
        else if !facts.isMulticast { self = .noMulticast }
        else if facts.isPointToPoint && !config.allowPointToPoint { self = .pointToPoint }
        else if !(config.useIPv4 && facts.hasIPv4) && !(config.useIPv6 && facts.hasIPv6) { self = .noEnabledProtocol }
        else { self = .used }
    }

    var label: String {
        switch self {
        case .used: "Avahi uses it"
        case .down: "down"
        case .noAddress: "no address"
        case .noMulticast: "no MULTICAST flag: Avahi ignores it"
        case .pointToPoint: "point-to-point: Avahi ignores it (allow-point-to-point=no)"
        case .excludedByConfig: "excluded by allow-interfaces/deny-interfaces"
        case .noEnabledProtocol: "no address of an enabled protocol (use-ipv4/use-ipv6)"
        }
    }
}

extension Finding {
    /// Check 4: at least one LAN interface is up, has an address and MULTICAST, and Avahi
    /// uses it; container, VM, bridge and VPN interfaces Avahi uses are flagged.
    /// - Parameters:
    ///   - config: the daemon's configuration (Avahi's defaults when it could not be read).
    ///   - configPath: the file to name in fixes.
    public static func interfaces(_ interfaces: [NetworkInterfaceFacts], config: AvahiConfig, configPath: String) -> Finding {
        let title = "network interfaces"
        var observed: [String] = []
        var used: [String] = []
        var flagged: [String] = []
        var withoutMulticast: [String] = []
        var excluded: [String] = []
        for facts in interfaces {
            let kind = InterfaceKind(facts)
            guard kind != .loopback else { continue }
            let use = InterfaceUse(facts, config: config)
            let addresses = facts.addresses.isEmpty ? "" : " " + facts.addresses.map(\.description).joined(separator: " ")
            let flags = [facts.isUp ? "up" : "down", facts.isMulticast ? "multicast" : "no multicast"].joined(separator: ", ")
            observed.append("\(facts.name): \(kind.label), \(flags)\(addresses): \(use.label)")
            switch use {
            case .used:
                used.append(facts.name)
                if kind.isFlagged { flagged.append(facts.name) }
            case .noMulticast: withoutMulticast.append(facts.name)
            case .excludedByConfig: excluded.append(facts.name)
            default: break
            }
        }
        let restart = "sudo systemctl restart avahi-daemon"
        if used.isEmpty {
            var fixes = withoutMulticast.map { "sudo ip link set \($0) multicast on" }
            if !excluded.isEmpty {
                fixes.append("allow-interfaces=\(excluded.joined(separator: ",")) in [server] of \(configPath) (and remove them from deny-interfaces=), then \(restart)")
            }
            if fixes.isEmpty { fixes.append("connect this host to a network: no interface is up with an address") }
            return Finding(check: "interfaces", title: title, status: .problem,
                           summary: "Avahi uses no network interface, so nothing is announced or found",
                           observed: observed, fixes: fixes)
        }
        if !flagged.isEmpty {
            let deny = (config.denyInterfaces + flagged).joined(separator: ",")
            return Finding(check: "interfaces", title: title, status: .warning,
                           summary: "Avahi also uses \(flagged.joined(separator: ", ")) (container, VM, bridge or VPN): peers may be told addresses they cannot reach",
                           observed: observed, fixes: ["deny-interfaces=\(deny) in [server] of \(configPath)", restart])
        }
        if !withoutMulticast.isEmpty {
            return Finding(check: "interfaces", title: title, status: .warning,
                           summary: "\(withoutMulticast.joined(separator: ", ")) lack\(withoutMulticast.count == 1 ? "s" : "") MULTICAST: nothing is found through \(withoutMulticast.count == 1 ? "it" : "them")",
                           observed: observed, fixes: withoutMulticast.map { "sudo ip link set \($0) multicast on" })
        }
        return Finding(check: "interfaces", title: title, status: .ok,
                       summary: "Avahi uses \(used.joined(separator: ", "))", observed: observed)
    }
}
