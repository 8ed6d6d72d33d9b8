/// What the firewall does with some traffic, which rule says so, and how to let it in.
public struct FirewallAnswer: Sendable, Equatable, CustomStringConvertible {
    public enum Status: String, Sendable, Equatable, Comparable {
        /// Every rule on the way was understood and lets it in.
        case allowed
        /// A rule this module does not interpret could drop it, or could be what lets it in
        /// before a rule that drops it: a warning, not a proof.
        case uncertain
        /// Certainly dropped or rejected.
        case blocked

        public static func < (lhs: Status, rhs: Status) -> Bool { lhs.rank < rhs.rank }
        private var rank: Int { self == .allowed ? 0 : self == .uncertain ? 1 : 2 }
    }

    public var status: Status
    /// The traffic asked about.
    public var traffic: String
    /// The rule that decides, as its tool prints it with where it is, e.g.
    /// `nftables table inet filter, chain input: policy drop` or
    /// `iptables, chain INPUT: -A INPUT -p udp -m udp --dport 5353 -j DROP`; nil when nothing
    /// stands in the way (no rules, or policy accept).
    public var decidingRule: String?
    /// For `.uncertain`: the rule that could not be interpreted (it could drop the traffic, or
    /// it could be what lets it in before `decidingRule` drops it).
    public var unclearRule: String?
    /// The commands that would let the traffic in, one per base chain in the way, in the
    /// syntax of the tool that owns the chain, e.g. `nft insert rule inet filter input udp
    /// dport 5353 accept` or `iptables -I INPUT -p udp --dport 5353 -j ACCEPT`. Empty when
    /// allowed.
    public var fixes: [String]

    /// One sentence: what happens, by which rule, and the fix.
    public var description: String {
        switch status {
        case .allowed:
            return "the firewall lets \(traffic) in"
        case .blocked:
            return "the firewall drops \(traffic) (rule: \(decidingRule ?? "?")); to let it in: \(fixes.joined(separator: "; "))"
        case .uncertain:
            let why = decidingRule.map { rule in "dropped by \(rule) unless \(unclearRule ?? "?") lets it in" }
                ?? "it could be dropped by \(unclearRule ?? "?")"
            return "the firewall may drop \(traffic): \(why); to be sure it is let in: \(fixes.joined(separator: "; "))"
        }
    }
}
