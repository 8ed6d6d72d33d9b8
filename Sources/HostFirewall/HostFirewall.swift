import FirewallRules
import Glibc
import SystemCommand

/// Reads this host's firewall: runs `nft -j list ruleset`, `iptables-save` and
/// `ip6tables-save` when they are installed, each with a timeout and an output bound, and
/// parses what they print with `FirewallRules`.
///
/// Only the local host's firewall, in the caller's network namespace. Reading needs root
/// (CAP_NET_ADMIN); without it, `Reading.unreadable` says so and nothing is claimed.
public enum HostFirewall {
    /// What could be read.
    public struct Reading: Sendable {
        /// The rules read (empty when nothing could be read).
        public var ruleset: FirewallRuleset
        /// The commands whose output was read, e.g. `nft -j list ruleset`.
        public var sources: [String]
        /// Why a tool that is installed could not be read, one line each, e.g. `nft -j list
        /// ruleset: Operation not permitted (run as root)`. Untrusted text (escape it before
        /// printing).
        public var unreadable: [String]

        /// Whether anything was read: when false, the firewall is unknown (not root, or no
        /// firewall tool installed) and no answer of `ruleset` means anything.
        public var wasRead: Bool { !sources.isEmpty }
    }

    /// Runs the tools and parses their output. Never fails: what cannot be read is listed in
    /// `unreadable`.
    /// - Parameter timeout: how long each tool may run.
    /// - Important: Blocks the calling thread while the tools run (a few milliseconds each, at
    ///   most `timeout` each); call it off the critical path.
    public static func read(timeout: Duration = .seconds(2)) -> Reading {
        var reading = Reading(ruleset: FirewallRuleset(), sources: [], unreadable: [])
        var nftables: FirewallRuleset?
        var iptables = FirewallRuleset()
        var nftablesBackend = false
        if let text = output(of: "nft", ["-j", "list", "ruleset"], timeout: timeout, into: &reading) {
            do {
                nftables = try FirewallRuleset(nftablesJSON: text)
                reading.sources.append("nft -j list ruleset")
            } catch {
                reading.unreadable.append("nft -j list ruleset: \(error.message)")
            }
        }
        for source in [FirewallRuleset.Source.iptables, .ip6tables] {
            let command = source.rawValue + "-save"
            guard let text = output(of: command, [], timeout: timeout, into: &reading) else { continue }
            do {
                iptables = iptables.merging(try FirewallRuleset(iptablesSave: text, source: source))
                nftablesBackend = nftablesBackend || FirewallRuleset.isNFTablesBackend(iptablesSave: text)
                reading.sources.append(command)
            } catch {
                reading.unreadable.append("\(command): \(error.message)")
            }
        }
        if var nftables {
            // iptables-nft's tables show up in both; iptables-legacy's only in iptables-save.
            if nftablesBackend { nftables = nftables.withoutNFTablesTables(managedBy: iptables) }
            reading.ruleset = nftables.merging(iptables)
        } else {
            reading.ruleset = iptables
        }
        return reading
    }

    /// The tool's standard output, or nil (not installed: nothing said; failed: said why).
    private static func output(of tool: String, _ arguments: [String], timeout: Duration, into reading: inout Reading) -> String? {
        guard let path = BoundedCommand.locate(tool) else { return nil }
        let label = ([tool] + arguments).joined(separator: " ")
        let command = BoundedCommand(path: path, arguments: arguments, timeout: timeout, outputLimit: FirewallRuleset.maximumInputBytes)
        switch command.run() {
        case .exited(0, let output, _):
            return String(decoding: output, as: UTF8.self)
        case .exited(let status, _, let errorOutput):
            let said = String(decoding: errorOutput, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "exit status \(status)"
            let hint = geteuid() == 0 ? "" : " (run as root)"
            reading.unreadable.append("\(label): \(said.prefix(200))\(hint)")
        case .killed(let why):
            reading.unreadable.append("\(label): stopped: \(why)")
        case .notStarted(let why):
            reading.unreadable.append("\(label): could not run: \(why)")
        }
        return nil
    }
}
