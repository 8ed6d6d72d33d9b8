import FirewallRules

/// What was read of the host firewall, and which TCP port to ask it about.
public struct FirewallFacts: Sendable {
    /// The rules read (nftables and iptables together); means nothing when `sources` is empty.
    public var ruleset: FirewallRuleset
    /// The commands whose output was read, e.g. `nft -j list ruleset`; empty when none could be
    /// (not root, or no firewall tool installed).
    public var sources: [String]
    /// Why an installed tool could not be read, one line each (untrusted text).
    public var unreadable: [String]
    /// The TCP port to check (`svc-doctor --port N`), or nil: check what a publisher started
    /// without `--port` meets, a port from `ephemeralPorts`.
    public var port: UInt16?
    /// The kernel's range of ephemeral ports (`/proc/sys/net/ipv4/ip_local_port_range`), or nil
    /// when it could not be read (Linux's default, 32768-60999, is assumed then).
    public var ephemeralPorts: ClosedRange<UInt16>?
    /// Whether svc-doctor runs as root (reading the firewall needs CAP_NET_ADMIN).
    public var isRoot: Bool

    public init(ruleset: FirewallRuleset, sources: [String], unreadable: [String], port: UInt16?,
                ephemeralPorts: ClosedRange<UInt16>?, isRoot: Bool) {
        self.ruleset = ruleset
        self.sources = sources
        self.unreadable = unreadable
        self.port = port
        self.ephemeralPorts = ephemeralPorts
        self.isRoot = isRoot
    }

    /// Linux's default ephemeral port range.
    public static let defaultEphemeralPorts: ClosedRange<UInt16> = 32768...60999

    /// The range in `/proc/sys/net/ipv4/ip_local_port_range` (two numbers, e.g. `32768\t60999`),
    /// or nil when the text is not that.
    public static func ephemeralPorts(parsing text: String) -> ClosedRange<UInt16>? {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).prefix(3).map { UInt16($0) }
        guard numbers.count == 2, let low = numbers[0], let high = numbers[1], low > 0, low <= high else { return nil }
        return low...high
    }
}

extension Finding {
    /// The longest rule text shown (rules come from the tools' output).
    static let maximumRuleText = 300

    /// Check 5: the firewall lets mDNS (UDP 5353 from the multicast groups) and incoming TCP
    /// to the publisher's port in. Blocked is a problem, a rule that cannot be interpreted a
    /// warning, and so is a firewall that cannot be read.
    ///
    /// Without a port, a publisher listens on an ephemeral port: the lowest, middle and highest
    /// port of the kernel's range stand for it (any of them dropped is a problem), and when
    /// the firewall lets only fixed ports in, the fix is `svc-publish --port` with one of them.
    public static func firewall(_ facts: FirewallFacts) -> Finding {
        let title = "firewall (mDNS and incoming TCP)"
        guard !facts.sources.isEmpty else { return unreadableFirewall(facts, title: title) }
        var observed = ["read: " + facts.sources.joined(separator: ", ")] + facts.unreadable.map { "not read: " + $0 }
        let ephemeral = facts.ephemeralPorts ?? FirewallFacts.defaultEphemeralPorts
        let tcpLabel = facts.port.map { "incoming TCP to port \($0)" }
            ?? "incoming TCP to ephemeral ports \(ephemeral.lowerBound)-\(ephemeral.upperBound) (svc-publish without --port)"
        if facts.ephemeralPorts == nil && facts.port == nil {
            observed.append("ip_local_port_range: not read; Linux's default \(ephemeral.lowerBound)-\(ephemeral.upperBound) assumed")
        }
        if facts.ruleset.isEmpty {
            observed.append("no rules: everything is let in")
            return Finding(check: "firewall", title: title, status: .ok,
                           summary: "no firewall rules: mDNS and \(tcpLabel) are let in", observed: observed)
        }

        let mdns = facts.ruleset.check(.mdns)
        let firstPort = facts.port ?? ephemeral.lowerBound
        let otherPorts = facts.port == nil ? [ephemeral.lowerBound / 2 + ephemeral.upperBound / 2, ephemeral.upperBound] : []
        // The worst answer; of equals, the first (lowest port).
        let tcp = otherPorts.map { facts.ruleset.check(.tcp(port: $0)) }
            .reduce(facts.ruleset.check(.tcp(port: firstPort))) { $1.status > $0.status ? $1 : $0 }
        let open = facts.ruleset.openTCPPorts()
        observed.append(seen(mdns, label: "mDNS (UDP port 5353 from 224.0.0.251, ff02::fb)"))
        observed.append(seen(tcp, label: tcpLabel))
        if tcp.status != .allowed && !open.isEmpty {
            observed.append("TCP ports it lets in: " + open.map(String.init).joined(separator: ", "))
        }

        var fixes: [String] = []
        if mdns.status != .allowed { fixes += mdns.fixes }
        if tcp.status != .allowed { fixes += tcpFixes(facts, tcp: tcp, open: open, ephemeral: ephemeral) }
        let status = [mdns.status, tcp.status].max().map(checkStatus) ?? .ok
        let summary: String
        if status == .ok {
            summary = "the firewall lets mDNS and \(tcpLabel) in"
        } else {
            let verdicts = [(mdns, "mDNS: other hosts cannot find services here, nor this host theirs"),
                            (tcp, "\(tcpLabel): members on other hosts cannot join")]
                .filter { $0.0.status != .allowed }
                .map { ($0.0.status == .blocked ? "drops " : "may drop ") + $0.1 }
            summary = "the firewall " + verdicts.joined(separator: "; and it ")
        }
        return Finding(check: "firewall", title: title, status: status, summary: summary, observed: observed, fixes: fixes)
    }

    private static func checkStatus(_ status: FirewallAnswer.Status) -> CheckStatus {
        switch status {
        case .allowed: .ok
        case .uncertain: .warning
        case .blocked: .problem
        }
    }

    /// `mDNS (...): let in` / `...: dropped by RULE` / `...: may be dropped: ...`.
    private static func seen(_ answer: FirewallAnswer, label: String) -> String {
        func shown(_ rule: String?) -> String { String((rule ?? "?").prefix(maximumRuleText)) }
        switch answer.status {
        case .allowed:
            return "\(label): let in"
        case .blocked:
            return "\(label): dropped by \(shown(answer.decidingRule))"
        case .uncertain:
            if let deciding = answer.decidingRule {
                return "\(label): dropped by \(shown(deciding)) unless \(shown(answer.unclearRule)) lets it in"
            }
            return "\(label): may be dropped by \(shown(answer.unclearRule))"
        }
    }

    /// For a port given with --port: the rules that let it in, or a port that is open. For
    /// ephemeral ports: publish on a port the firewall lets in; when there is none, open one
    /// just below the ephemeral range (no outgoing connection takes it) and publish on it.
    private static func tcpFixes(_ facts: FirewallFacts, tcp: FirewallAnswer, open: [UInt16], ephemeral: ClosedRange<UInt16>) -> [String] {
        if facts.port != nil {
            return tcp.fixes + open.prefix(1).map { "svc-publish --port \($0)   (or publish on a port the firewall lets in)" }
        }
        if let port = open.first {
            return ["svc-publish --port \(port)   (the firewall lets only fixed ports in; this is one)"]
        }
        let port = ephemeral.lowerBound > 1024 ? ephemeral.lowerBound - 1 : ephemeral.upperBound < UInt16.max ? ephemeral.upperBound + 1 : ephemeral.lowerBound
        return facts.ruleset.check(.tcp(port: port)).fixes + ["svc-publish --port \(port)"]
    }

    private static func unreadableFirewall(_ facts: FirewallFacts, title: String) -> Finding {
        if facts.unreadable.isEmpty {
            return Finding(check: "firewall", title: title, status: .warning,
                           summary: "no firewall tool is installed (nft, iptables-save): the firewall could not be checked",
                           observed: ["nft, iptables-save, ip6tables-save: not found in /usr/sbin, /sbin, /usr/bin, /bin"],
                           fixes: ["sudo apt-get install nftables   (lets svc-doctor read the rules)"])
        }
        return Finding(check: "firewall", title: title, status: .warning,
                       summary: "the firewall could not be read" + (facts.isRoot ? "" : " (it needs root)"),
                       observed: facts.unreadable.map { "not read: " + $0 },
                       fixes: facts.isRoot ? [] : ["sudo svc-doctor   (reading the firewall needs root)"])
    }
}
