import Glibc
import HostDiagnosis
import HostFirewall

/// Gathers `FirewallFacts`: the rules (`HostFirewall.read`, which runs nft and iptables-save
/// bounded) and the kernel's ephemeral port range.
enum FirewallProbe {
    static let portRangePath = "/proc/sys/net/ipv4/ip_local_port_range"

    static func facts(port: UInt16?) -> FirewallFacts {
        let reading = HostFirewall.read(timeout: .seconds(2))
        let range = (try? SystemFiles.read(portRangePath, limit: 256)).flatMap(FirewallFacts.ephemeralPorts(parsing:))
        return FirewallFacts(ruleset: reading.ruleset, sources: reading.sources, unreadable: reading.unreadable,
                             port: port, ephemeralPorts: range, isRoot: geteuid() == 0)
    }
}
