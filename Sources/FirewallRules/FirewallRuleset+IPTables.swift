extension FirewallRuleset {
    /// Reads `iptables-save` (`source: .iptables`) or `ip6tables-save` (`.ip6tables`) output:
    /// the filter table's INPUT chain and the chains it jumps to. Both backends (nf_tables and
    /// legacy) print this format; other tables are skipped.
    /// - Throws: `FirewallParseError` when the text is too large, or has more rules than
    ///   `maximumRules`. Lines it does not understand become rules it does not understand.
    public init(iptablesSave text: String, source: Source) throws(FirewallParseError) {
        self.init()
        guard text.utf8.count <= Self.maximumInputBytes else {
            throw FirewallParseError("\(source.rawValue)-save's output is larger than \(Self.maximumInputBytes >> 20) MiB; not read")
        }
        let family = source == .ip6tables ? "ip6" : "ip"
        var table = ""
        var ruleCount = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmingSuffix(while: { $0 == "\r" || $0 == " " })
            if line.hasPrefix("*") {
                table = String(line.dropFirst())
                continue
            }
            guard table == "filter" else { continue }
            if line.hasPrefix(":") {
                // `:INPUT DROP [0:0]`, or `:USER - [0:0]` for a chain of one's own.
                let fields = line.dropFirst().split(separator: " ")
                guard let name = fields.first.map(String.init) else { continue }
                chains[Self.key(source, family, table, name)] = Chain(name: name, rules: [])
                if name == "INPUT" {
                    baseChains.append(BaseChain(source: source, family: family, table: table, chain: name, priority: 0,
                                                policyAccepts: fields.count < 2 || fields[1] != "DROP"))
                }
                continue
            }
            var words = IPTablesWords.split(line)
            // `iptables-save -c` puts the counters first: `[5:300] -A INPUT ...`.
            if let first = words.first, first.hasPrefix("[") { words.removeFirst() }
            guard words.count >= 2, words[0] == "-A" else { continue }
            ruleCount += 1
            guard ruleCount <= Self.maximumRules else {
                throw FirewallParseError("\(source.rawValue)-save's output has more than \(Self.maximumRules) rules; not read")
            }
            let chain = words[1]
            let rule = IPTablesRuleReader(family: family).rule(Array(words.dropFirst(2)), text: String(line))
            chains[Self.key(source, family, table, chain), default: Chain(name: chain, rules: [])].rules.append(rule)
        }
        resolveTargets(source: source, family: family)
    }

    /// A jump to a name that is not a declared chain is a target this module does not know.
    private mutating func resolveTargets(source: Source, family: String) {
        for (key, chain) in chains {
            var resolved = chain
            for index in resolved.rules.indices {
                switch resolved.rules[index].action {
                case .jump(let target), .goto(let target):
                    if chains[Self.key(source, family, "filter", target)] == nil { resolved.rules[index].action = .unknown(target) }
                default:
                    continue
                }
            }
            chains[key] = resolved
        }
    }
}

private extension Substring {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}

/// Splits an iptables-save line into words: spaces separate, `"..."` quotes (with `\"`).
enum IPTablesWords {
    static func split(_ line: Substring) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        var escaped = false
        for character in line {
            if escaped {
                word.append(character)
                escaped = false
            } else if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false } else { word.append(character) }
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if character == "\"" {
                quoted = true
                inWord = true
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }
}

/// Turns the words after `-A CHAIN` into a rule.
struct IPTablesRuleReader {
    let family: String

    /// Targets that do not end the walk.
    static let passingTargets: Set<String> = ["LOG", "NFLOG", "ULOG", "MARK", "CONNMARK", "TRACE", "AUDIT", "CLASSIFY", "CT", "NOTRACK", "TCPMSS", "DSCP", "TOS", "TTL", "HL", "SET"]
    /// Options whose value does not matter to the packets checked.
    static let ignoredOptions: Set<String> = ["--comment", "-m", "--match"]

    func rule(_ words: [String], text: String) -> FirewallRuleset.Rule {
        var conditions: [Condition] = []
        var action = FirewallRuleset.Action.none
        var negateNext = false
        var index = 0
        func value() -> String? {
            guard index + 1 < words.count else { return nil }
            index += 1
            return words[index]
        }
        while index < words.count {
            let word = words[index]
            defer { index += 1 }
            if word == "!" {
                negateNext = true
                continue
            }
            let negated = negateNext
            negateNext = false
            switch word {
            case "-p", "--protocol":
                guard let name = value() else { conditions.append(.unknown(word)); continue }
                if name == "all" || name == "0" {
                    if negated { conditions.append(.transport([], negated: false)) }
                } else if let number = Int(name) ?? NFTExpressionReader.protocolNumbers[name.lowercased()] {
                    conditions.append(.transport([number], negated: negated))
                } else {
                    conditions.append(.unknown("-p \(name)"))
                }
            case "-d", "--destination", "--dst":
                guard let text = value() else { conditions.append(.unknown(word)); continue }
                let prefixes = text.split(separator: ",").compactMap { IPPrefix(String($0)) }
                if prefixes.isEmpty || prefixes.count != text.split(separator: ",").count {
                    conditions.append(.unknown("-d \(text)"))
                } else {
                    conditions.append(.destinationAddress(prefixes, negated: negated))
                }
            case "-i", "--in-interface":
                guard let name = value() else { conditions.append(.unknown(word)); continue }
                conditions.append(.inputInterface([name], negated: negated))
            case "--dport", "--destination-port", "--dports", "--destination-ports":
                guard let text = value(), let ranges = Self.ports(text) else { conditions.append(.unknown(word)); continue }
                conditions.append(.destinationPort(ranges, negated: negated))
            case "--ctstate", "--state":
                guard let text = value() else { conditions.append(.unknown(word)); continue }
                conditions.append(.connectionState(Set(text.lowercased().split(separator: ",").map(String.init)), negated: negated))
            case "--ctstatus":
                guard let text = value() else { conditions.append(.unknown(word)); continue }
                conditions.append(.connectionStatus(Set(text.lowercased().split(separator: ",").map(String.init)), negated: negated))
            case "--pkt-type":
                guard let text = value() else { conditions.append(.unknown(word)); continue }
                conditions.append(.packetType([text.lowercased()], negated: negated))
            case "-j", "--jump", "-g", "--goto":
                guard let target = value() else { action = .unknown(word); continue }
                switch target {
                case "ACCEPT": action = .accept
                case "DROP": action = .drop
                case "REJECT": action = .reject
                case "RETURN": action = .return
                case _ where Self.passingTargets.contains(target): action = .none
                default:
                    // A chain of one's own, or an extension target (QUEUE, NFQUEUE, TARPIT):
                    // told apart once every chain is declared (`resolvingTargets`).
                    action = word == "-g" || word == "--goto" ? .goto(target) : .jump(target)
                }
                // The target's own options (--reject-with, --log-prefix, ...) follow; they do
                // not change whether the packet passes.
                index = words.count
            case _ where Self.ignoredOptions.contains(word):
                _ = value()
            default:
                // -s, --sport, -m limit's --limit, -m set's --match-set, ...: not understood.
                // The option's value (if any) is taken with it.
                var described = word
                if index + 1 < words.count, !words[index + 1].hasPrefix("-"), words[index + 1] != "!" {
                    described += " " + (value() ?? "")
                }
                conditions.append(.unknown((negated ? "! " : "") + described))
            }
        }
        return FirewallRuleset.Rule(conditions: conditions, action: action, text: text)
    }

    /// `5353`, `1024:65535`, `22,80,8000:9000` (multiport), `:1023`, `1024:`.
    static func ports(_ text: String) -> [ClosedRange<Int>]? {
        var ranges: [ClosedRange<Int>] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = item.split(separator: ":", omittingEmptySubsequences: false)
            switch bounds.count {
            case 1:
                guard let port = Int(bounds[0]), (0...65535).contains(port) else { return nil }
                ranges.append(port...port)
            case 2:
                let low = bounds[0].isEmpty ? 0 : Int(bounds[0])
                let high = bounds[1].isEmpty ? 65535 : Int(bounds[1])
                guard let low, let high, 0 <= low, low <= high, high <= 65535 else { return nil }
                ranges.append(low...high)
            default:
                return nil
            }
        }
        return ranges.isEmpty ? nil : ranges
    }
}

extension FirewallRuleset {
    /// Whether iptables-save's header says the nf_tables backend (`# Generated by iptables-save
    /// v1.8.9 (nf_tables)`): its tables then show up in `nft list ruleset` too.
    public static func isNFTablesBackend(iptablesSave text: String) -> Bool {
        text.split(separator: "\n", maxSplits: 8).contains { $0.hasPrefix("# Generated by") && $0.contains("(nf_tables)") }
    }
}
