/// The host firewall's rules for incoming packets, read from nftables (`nft -j list ruleset`)
/// and iptables (`iptables-save`, `ip6tables-save`), in one form that `check` walks.
///
/// Only the chains an incoming packet for this host passes are kept: nftables base chains of
/// type filter on the input hook (families ip, ip6, inet) and iptables' filter INPUT, with the
/// chains they jump to. Everything else (prerouting, netdev ingress, bridge, raw and mangle
/// tables) is not read; see README, *Firewall checks*.
public struct FirewallRuleset: Sendable, Equatable {
    /// Which program's rules a chain holds: the fix is written in that program's syntax.
    public enum Source: String, Sendable, Hashable {
        case nftables
        case iptables
        case ip6tables
    }

    /// What a rule does when it matches.
    enum Action: Sendable, Equatable {
        /// Nothing that ends the walk (counter, log, comment, a mark set).
        case none
        case accept
        case drop
        case reject
        case jump(String)
        case goto(String)
        case `return`
        /// A verdict this module does not interpret (queue, an iptables target it does not
        /// know): the packet could be dropped.
        case unknown(String)
    }

    /// One rule: its conditions (all must hold) and what it does; `text` names it for people.
    struct Rule: Sendable, Equatable {
        var conditions: [Condition]
        var action: Action
        var text: String
    }

    /// A chain: its rules and, for a base chain, its policy.
    struct Chain: Sendable, Equatable {
        var name: String
        var rules: [Rule]
    }

    /// Where a base chain sits: nftables `<family> <table> <chain>`, or iptables' INPUT.
    struct BaseChain: Sendable, Equatable {
        var source: Source
        /// nftables: ip, ip6 or inet; iptables: ip or ip6.
        var family: String
        var table: String
        var chain: String
        /// nftables priority; iptables' filter INPUT counts as 0.
        var priority: Int
        /// true for policy accept.
        var policyAccepts: Bool

        func applies(to family: IncomingPacket.Family) -> Bool {
            self.family == "inet" || self.family == (family == .ipv4 ? "ip" : "ip6")
        }

        /// `table inet filter, chain input` or `iptables, chain INPUT`.
        var place: String {
            source == .nftables ? "nftables table \(family) \(table), chain \(chain)" : "\(source.rawValue), chain \(chain)"
        }
    }

    /// The base chains, by priority, and every chain of their tables, keyed by `key(_:_:_:_:)`.
    var baseChains: [BaseChain] = []
    var chains: [String: Chain] = [:]

    /// A ruleset with no rules: everything passes.
    public init() {}

    /// Whether any base chain was read (an empty ruleset lets everything in).
    public var isEmpty: Bool { baseChains.isEmpty }

    /// The sources whose chains are here, in order, without repeats.
    public var sources: [Source] {
        var seen: [Source] = []
        for chain in baseChains where !seen.contains(chain.source) { seen.append(chain.source) }
        return seen
    }

    static func key(_ source: Source, _ family: String, _ table: String, _ chain: String) -> String {
        "\(source.rawValue) \(family) \(table) \(chain)"
    }

    /// Both rulesets' chains, for a packet that passes through both (nftables and iptables
    /// with the legacy backend hook into the kernel separately).
    public func merging(_ other: FirewallRuleset) -> FirewallRuleset {
        var merged = self
        merged.baseChains += other.baseChains
        merged.chains.merge(other.chains) { mine, _ in mine }
        merged.baseChains.sort { $0.priority < $1.priority }
        return merged
    }

    /// Without the nftables tables that iptables-nft manages (`ip filter`, `ip6 filter`),
    /// when iptables-save also printed them: they are the same rules, better read (and fixed)
    /// with iptables' own syntax.
    public func withoutNFTablesTables(managedBy iptables: FirewallRuleset) -> FirewallRuleset {
        let managed = Set(iptables.baseChains.filter { $0.source != .nftables }.map { "\($0.family) \($0.table)" })
        var kept = self
        kept.baseChains.removeAll { $0.source == .nftables && managed.contains("\($0.family) \($0.table)") }
        return kept
    }
}
