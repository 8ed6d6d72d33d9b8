import CommandLineSupport
import Dispatch
import FirewallRules
import HostFirewall

/// Warns on stderr when the local firewall would drop connections to the room's port or mDNS
/// (issue 12): members on other hosts could not see or join the room, and nothing else says why.
enum FirewallWarnings {
    /// Reads the firewall on a queue of its own (the room is already up and registered; this
    /// never holds it up) and prints one line per kind of traffic that would be dropped.
    /// Nothing is printed when the firewall cannot be read (not root, no nft or iptables).
    static func start(port: UInt16) {
        DispatchQueue(label: "svc.publish.firewall").async {
            let reading = HostFirewall.read()
            guard reading.wasRead else { return }
            for line in lines(reading.ruleset, port: port) { Console.note(line) }
        }
    }

    /// The warnings for a room on TCP `port`: what would be dropped, by which rule, and how to
    /// let it in, or which `--port` the firewall lets in.
    static func lines(_ ruleset: FirewallRuleset, port: UInt16) -> [String] {
        var lines: [String] = []
        let tcp = ruleset.check(.tcp(port: port))
        if tcp.status != .allowed {
            let open = ruleset.openTCPPorts().filter { $0 != port }
            let instead = open.isEmpty ? "" : "; or publish on a port it lets in: --port \(open.map(String.init).joined(separator: " or --port "))"
            lines.append("\(tcp.description)\(instead); members on other hosts cannot join until then")
        }
        let mdns = ruleset.check(.mdns)
        if mdns.status != .allowed {
            lines.append("\(mdns.description); other hosts cannot find the room until then")
        }
        return lines
    }
}
