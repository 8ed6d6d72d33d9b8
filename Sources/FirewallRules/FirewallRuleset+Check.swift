extension FirewallRuleset {
    /// How deep jumps and gotos are followed; deeper is treated as not understood.
    public static let maximumJumpDepth = 16
    /// How many rules one check looks at, at most, over all jumps (a ruleset that jumps into the
    /// same chains over and over is not followed further).
    public static let maximumRuleVisits = 200_000

    /// What the firewall does with `traffic` over IPv4 and IPv6: the worse of the two answers,
    /// with the fixes for both.
    /// - Parameter inputInterface: the interface it arrives on, when known.
    public func check(_ traffic: Traffic, inputInterface: String? = nil) -> FirewallAnswer {
        let answers = traffic.packets(inputInterface: inputInterface).map { check($0) }
        var worst = answers.max { $0.status < $1.status } ?? FirewallAnswer(status: .allowed, traffic: "", fixes: [])
        worst.traffic = traffic.description
        var fixes: [String] = []
        for fix in answers.flatMap(\.fixes) where !fixes.contains(fix) { fixes.append(fix) }
        worst.fixes = fixes
        return worst
    }

    /// What the firewall does with one packet. Every base chain it passes must accept it;
    /// the first that drops it, by priority, decides.
    public func check(_ packet: IncomingPacket) -> FirewallAnswer {
        var answer = FirewallAnswer(status: .allowed, traffic: packet.description, fixes: [])
        for base in baseChains where base.applies(to: packet.family) {
            let walk = ChainWalk(ruleset: self, base: base, packet: packet)
            let result = walk.run()
            guard result.status != .allowed else { continue }
            answer.fixes.append(Self.fix(for: packet, in: base))
            // The first chain (by priority) with the worst answer decides.
            if result.status > answer.status {
                answer.status = result.status
                answer.decidingRule = result.deciding
                answer.unclearRule = result.unclear
            }
        }
        return answer
    }

    /// TCP ports of 1024 and up that accept rules name and that the firewall lets in over
    /// IPv4 and IPv6, lowest first, at most `limit`: what `svc-publish --port` could use when
    /// the firewall only allows fixed ports. From a range, only its first port is offered.
    public func openTCPPorts(limit: Int = 3) -> [UInt16] {
        var candidates = Set<Int>()
        for chain in chains.values {
            for rule in chain.rules where rule.action == .accept {
                for case .destinationPort(let ranges, false) in rule.conditions {
                    for range in ranges where range.upperBound >= 1024 { candidates.insert(max(range.lowerBound, 1024)) }
                }
            }
        }
        var open: [UInt16] = []
        for port in candidates.sorted() where open.count < limit {
            guard let port = UInt16(exactly: port) else { continue }
            if check(.tcp(port: port)).status == .allowed { open.append(port) }
        }
        return open
    }

    /// The command that lets `packet`'s kind of traffic in first thing in `base`.
    static func fix(for packet: IncomingPacket, in base: BaseChain) -> String {
        let proto = packet.transport.rawValue
        switch base.source {
        case .nftables:
            return "nft insert rule \(base.family) \(base.table) \(base.chain) \(proto) dport \(packet.destinationPort) accept"
        case .iptables, .ip6tables:
            return "\(base.source.rawValue) -I \(base.chain) -p \(proto) --dport \(packet.destinationPort) -j ACCEPT"
        }
    }
}

/// One walk of a base chain for one packet, following jumps. Rules whose conditions cannot be
/// told are "maybes": the walk goes on as if they did not match and remembers what they
/// would do, so that a drop after a maybe-accept, or an accept after a maybe-drop, is reported
/// as uncertain, never as certain.
struct ChainWalk {
    let ruleset: FirewallRuleset
    let base: FirewallRuleset.BaseChain
    let packet: IncomingPacket

    enum Verdict: Equatable {
        case accept, drop, unknown
    }

    struct Result {
        var status: FirewallAnswer.Status
        var deciding: String?
        var unclear: String?
    }

    /// What one chain ends with when nothing uncertain matches: a verdict, or falling
    /// through (the end, or return) to its caller.
    private struct Outcome {
        var maybes: [(Verdict, String)] = []
        var end: (Verdict, String)?
    }

    private final class Budget {
        var visits = 0
    }

    func run() -> Result {
        let budget = Budget()
        let outcome = walk(base.chain, depth: 0, budget: budget)
        let end = outcome.end ?? (base.policyAccepts ? .accept : .drop, "\(base.place): policy \(base.policyAccepts ? "accept" : "drop")")
        switch end.0 {
        case .accept:
            if let maybe = outcome.maybes.first(where: { $0.0 != .accept }) {
                return Result(status: .uncertain, deciding: nil, unclear: maybe.1)
            }
            return Result(status: .allowed)
        case .drop:
            if let maybe = outcome.maybes.first(where: { $0.0 != .drop }) {
                return Result(status: .uncertain, deciding: end.1, unclear: maybe.1)
            }
            return Result(status: .blocked, deciding: end.1)
        case .unknown:
            return Result(status: .uncertain, deciding: nil, unclear: end.1)
        }
    }

    private func walk(_ name: String, depth: Int, budget: Budget) -> Outcome {
        var outcome = Outcome()
        let place = base.source == .nftables ? "nftables table \(base.family) \(base.table), chain \(name)" : "\(base.source.rawValue), chain \(name)"
        guard let chain = ruleset.chains[FirewallRuleset.key(base.source, base.family, base.table, name)] else {
            outcome.maybes.append((.unknown, "\(place) (not in the ruleset that was read)"))
            return outcome
        }
        for rule in chain.rules {
            budget.visits += 1
            let label = "\(place): \(rule.text)"
            guard budget.visits <= FirewallRuleset.maximumRuleVisits else {
                outcome.maybes.append((.unknown, "\(label) (the ruleset jumps into its chains too often to be followed)"))
                return outcome
            }
            var truth = Condition.Truth.yes
            for condition in rule.conditions {
                switch condition.evaluate(packet) {
                case .no: truth = .no
                case .unknown where truth == .yes: truth = .unknown
                default: break
                }
                if truth == .no { break }
            }
            if truth == .no { continue }
            let certain = truth == .yes
            switch rule.action {
            case .none:
                continue
            case .accept, .drop, .reject, .unknown:
                let verdict: Verdict = rule.action == .accept ? .accept : (rule.action == .drop || rule.action == .reject) ? .drop : .unknown
                if certain {
                    outcome.end = (verdict, label)
                    return outcome
                }
                outcome.maybes.append((verdict, label))
            case .return:
                if certain { return outcome }
                outcome.maybes.append((.unknown, label))
            case .jump(let target), .goto(let target):
                guard depth < FirewallRuleset.maximumJumpDepth else {
                    outcome.maybes.append((.unknown, "\(label) (jumps nest deeper than \(FirewallRuleset.maximumJumpDepth))"))
                    continue
                }
                let inner = walk(target, depth: depth + 1, budget: budget)
                outcome.maybes += inner.maybes
                if certain {
                    if let end = inner.end {
                        outcome.end = end
                        return outcome
                    }
                    if case .goto = rule.action { return outcome }
                } else {
                    if let end = inner.end {
                        outcome.maybes.append((end.0, end.1))
                    } else if case .goto = rule.action {
                        // If it matched, the rest of this chain would be skipped.
                        outcome.maybes.append((.unknown, label))
                    }
                }
            }
        }
        return outcome
    }
}
