extension FirewallRuleset {
    /// The most text a ruleset may have (nftables JSON or iptables-save): 8 MiB.
    public static let maximumInputBytes = 8 << 20
    /// The most rules read from one ruleset.
    public static let maximumRules = 100_000
    /// How deep nft's JSON may nest (real rulesets stay under 12).
    static let maximumJSONDepth = 48

    /// Reads `nft -j list ruleset` output: the base chains of type filter on the input hook
    /// (families ip, ip6, inet) and every chain of their tables.
    /// - Throws: `FirewallParseError` when the text is not nft's JSON, or is too large.
    public init(nftablesJSON text: String) throws(FirewallParseError) {
        self.init()
        guard text.utf8.count <= Self.maximumInputBytes else {
            throw FirewallParseError("nft's output is larger than \(Self.maximumInputBytes >> 20) MiB; not read")
        }
        let root = try JSONNode.parse(text, maximumDepth: Self.maximumJSONDepth)
        guard let objects = root["nftables"]?.array else { throw FirewallParseError("nft's JSON has no \"nftables\" list") }
        var sets: [String: JSONNode] = [:]
        var rules: [(chain: String, rule: Rule)] = []
        for object in objects {
            guard let (kind, body) = object.single else { continue }
            guard let family = body["family"]?.string, ["ip", "ip6", "inet"].contains(family) else { continue }
            switch kind {
            case "set", "map":
                if let table = body["table"]?.string, let name = body["name"]?.string { sets["\(family) \(table) \(name)"] = body }
            case "chain":
                guard let table = body["table"]?.string, let name = body["name"]?.string else { continue }
                chains[Self.key(.nftables, family, table, name)] = Chain(name: name, rules: [])
                if body["hook"]?.string == "input", body["type"]?.string == "filter" {
                    baseChains.append(BaseChain(source: .nftables, family: family, table: table, chain: name,
                                                priority: body["prio"]?.integer ?? 0, policyAccepts: body["policy"]?.string != "drop"))
                }
            case "rule":
                guard let table = body["table"]?.string, let chain = body["chain"]?.string, let expressions = body["expr"]?.array else { continue }
                guard rules.count < Self.maximumRules else {
                    throw FirewallParseError("nft's ruleset has more than \(Self.maximumRules) rules; not read")
                }
                let context = NFTExpressionReader(family: family, table: table, sets: sets)
                for rule in context.rules(expressions, handle: body["handle"]?.integer) {
                    rules.append((chain: Self.key(.nftables, family, table, chain), rule: rule))
                }
            default:
                continue
            }
        }
        for (key, rule) in rules { chains[key]?.rules.append(rule) }
        baseChains.sort { $0.priority < $1.priority }
    }
}

/// Turns one nft JSON rule into rules of this module: a verdict map becomes one rule per entry.
struct NFTExpressionReader {
    let family: String
    let table: String
    /// Named sets and maps seen so far, by `family table name` (nft lists them before rules).
    let sets: [String: JSONNode]

    func rules(_ expressions: [JSONNode], handle: Int?) -> [FirewallRuleset.Rule] {
        var conditions: [Condition] = []
        var action = FirewallRuleset.Action.none
        var words: [String] = []
        var expanded: [FirewallRuleset.Rule] = []
        for expression in expressions {
            guard let (kind, body) = expression.single else {
                conditions.append(.unknown("an expression that is not one object"))
                continue
            }
            switch kind {
            case "match":
                let left = body["left"] ?? .null
                let right = body["right"] ?? .null
                let op = body["op"]?.string ?? "=="
                words.append("\(Self.text(left)) \(op == "==" || op == "in" ? "" : op + " ")\(Self.text(right))")
                conditions += match(left, op, right)
            case "accept": action = .accept; words.append("accept")
            case "drop": action = .drop; words.append("drop")
            case "reject": action = .reject; words.append("reject")
            case "return": action = .return; words.append("return")
            case "continue": words.append("continue")
            case "jump", "goto":
                let target = body["target"]?.string ?? ""
                action = kind == "jump" ? .jump(target) : .goto(target)
                words.append("\(kind) \(target)")
            case "counter", "log", "comment", "mangle", "notrack":
                words.append(kind)
            case "vmap":
                // `key vmap { value : verdict, ... }`: one rule per entry, in order.
                let key = body["key"] ?? .null
                words.append("\(Self.text(key)) vmap { ... }")
                guard let entries = body["data"]?["set"]?.array else {
                    action = .unknown("vmap")
                    continue
                }
                let prefix = conditions
                for entry in entries {
                    guard let pair = entry.array, pair.count == 2, let (verdictKind, verdictBody) = pair[1].single else { continue }
                    let entryAction: FirewallRuleset.Action = switch verdictKind {
                    case "accept": .accept
                    case "drop": .drop
                    case "reject": .reject
                    case "return": .return
                    case "jump": .jump(verdictBody["target"]?.string ?? "")
                    case "goto": .goto(verdictBody["target"]?.string ?? "")
                    default: .unknown(verdictKind)
                    }
                    expanded.append(FirewallRuleset.Rule(conditions: prefix + match(key, "==", pair[0]), action: entryAction,
                                                         text: Self.place(handle) + "\(Self.text(key)) \(Self.text(pair[0])) : \(verdictKind)"))
                }
            default:
                // limit, quota, meter, queue, xt, fib, ...: a condition or a verdict this
                // module does not interpret.
                words.append(kind)
                conditions.append(.unknown(kind))
                if ["queue", "xt", "synproxy", "dup", "fwd"].contains(kind) { action = .unknown(kind) }
            }
        }
        if !expanded.isEmpty { return expanded }
        let text = Self.place(handle) + words.joined(separator: " ")
        // A rule with an expression not understood and no verdict of its own may still hide one.
        if action == .none, conditions.contains(where: { if case .unknown = $0 { true } else { false } }) {
            action = .unknown(text)
        }
        return [FirewallRuleset.Rule(conditions: conditions, action: action, text: text)]
    }

    private static func place(_ handle: Int?) -> String { handle.map { "(handle \($0)) " } ?? "" }

    /// The conditions one `match` expression stands for.
    func match(_ left: JSONNode, _ op: String, _ right: JSONNode) -> [Condition] {
        let unknown = [Condition.unknown("\(Self.text(left)) \(op) \(Self.text(right))")]
        guard op == "==" || op == "!=" || op == "in" else { return unknown }
        let negated = op == "!="
        guard let (kind, body) = left.single else { return unknown }
        let values = self.values(right)
        switch kind {
        case "payload":
            guard let proto = body["protocol"]?.string, let field = body["field"]?.string else { return unknown }
            var implied: [Condition] = []
            switch proto {
            case "tcp": implied = [.transport([6], negated: false)]
            case "udp": implied = [.transport([17], negated: false)]
            case "ip": implied = family == "inet" ? [.family(.ipv4, negated: false)] : []
            case "ip6": implied = family == "inet" ? [.family(.ipv6, negated: false)] : []
            case "th": implied = []
            default: return [.unknown("\(proto) \(field)")]
            }
            switch (proto, field) {
            case ("tcp", "dport"), ("udp", "dport"), ("th", "dport"):
                guard let ranges = Self.ports(values) else { return implied + unknown }
                return implied + [.destinationPort(ranges, negated: negated)]
            case ("ip", "daddr"), ("ip6", "daddr"):
                guard let prefixes = Self.prefixes(values) else { return implied + unknown }
                return implied + [.destinationAddress(prefixes, negated: negated)]
            case ("ip", "protocol"), ("ip6", "nexthdr"):
                guard let numbers = Self.protocols(values) else { return implied + unknown }
                return implied + [.transport(numbers, negated: negated)]
            default:
                return implied + unknown
            }
        case "meta":
            switch body["key"]?.string {
            case "l4proto":
                guard let numbers = Self.protocols(values) else { return unknown }
                return [.transport(numbers, negated: negated)]
            case "nfproto":
                guard values?.count == 1, let name = values?.first?.string, name == "ipv4" || name == "ipv6" else { return unknown }
                return [.family(name == "ipv4" ? .ipv4 : .ipv6, negated: negated)]
            case "iif", "iifname":
                guard let names = values?.compactMap(\.string), names.count == values?.count else { return unknown }
                return [.inputInterface(names, negated: negated)]
            case "pkttype":
                guard let names = values?.compactMap(\.string), names.count == values?.count else { return unknown }
                return [.packetType(Set(names), negated: negated)]
            default:
                return unknown
            }
        case "ct":
            guard let names = values?.compactMap(\.string), names.count == values?.count else { return unknown }
            switch body["key"]?.string {
            case "state": return [.connectionState(Set(names), negated: negated)]
            case "status": return [.connectionStatus(Set(names), negated: negated)]
            default: return unknown
            }
        default:
            return unknown
        }
    }

    /// The values a match's right side stands for: one value, an anonymous set, or a named set
    /// (`@name`) of this table; nil when it is something else (a concatenation, a map).
    func values(_ right: JSONNode) -> [JSONNode]? {
        if let name = right.string, name.hasPrefix("@") {
            guard let set = sets["\(family) \(table) \(name.dropFirst())"] else { return nil }
            return (set["elem"]?.array ?? []).map { $0["elem"]?["val"] ?? $0 }
        }
        if let items = right["set"]?.array { return items }
        if case .array(let items) = right { return items }
        return [right]
    }

    static func ports(_ values: [JSONNode]?) -> [ClosedRange<Int>]? {
        guard let values else { return nil }
        var ranges: [ClosedRange<Int>] = []
        for value in values {
            if let port = value.integer ?? value.string.flatMap({ Self.serviceNames[$0] }), (0...65535).contains(port) {
                ranges.append(port...port)
            } else if let bounds = value["range"]?.array, bounds.count == 2,
                      let low = bounds[0].integer, let high = bounds[1].integer, 0 <= low, low <= high, high <= 65535 {
                ranges.append(low...high)
            } else {
                return nil
            }
        }
        return ranges
    }

    static func prefixes(_ values: [JSONNode]?) -> [IPPrefix]? {
        guard let values else { return nil }
        var prefixes: [IPPrefix] = []
        for value in values {
            if let text = value.string, let prefix = IPPrefix(text) {
                prefixes.append(prefix)
            } else if let body = value["prefix"], let address = body["addr"]?.string, let length = body["len"]?.integer,
                      let prefix = IPPrefix("\(address)/\(length)") {
                prefixes.append(prefix)
            } else {
                return nil
            }
        }
        return prefixes
    }

    static func protocols(_ values: [JSONNode]?) -> Set<Int>? {
        guard let values else { return nil }
        var numbers = Set<Int>()
        for value in values {
            if let number = value.integer {
                numbers.insert(number)
            } else if let name = value.string, let number = Self.protocolNumbers[name] {
                numbers.insert(number)
            } else {
                return nil
            }
        }
        return numbers
    }

    /// Protocol names nft prints.
    static let protocolNumbers = ["icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "ipv6-icmp": 58, "icmpv6": 58, "sctp": 132, "udplite": 136, "esp": 50, "ah": 51, "gre": 47]
    /// Service names nft may print instead of port numbers (`nft -S`, older versions).
    static let serviceNames = ["mdns": 5353, "ssh": 22, "http": 80, "https": 443, "domain": 53, "ipp": 631, "bootpc": 68, "dhcpv6-client": 546]

    /// How the rule writes an expression, for people: `tcp dport`, `{ 22, 80 }`, `1024-65535`.
    static func text(_ node: JSONNode, depth: Int = 0) -> String {
        guard depth < 8 else { return "..." }
        switch node {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .integer(let value): return String(value)
        case .number(let text): return text
        case .string(let text): return text.count > 64 ? String(text.prefix(64)) + "..." : text
        case .array(let items): return items.prefix(16).map { text($0, depth: depth + 1) }.joined(separator: ",") + (items.count > 16 ? ",..." : "")
        case .object:
            guard let (kind, body) = node.single else { return "{...}" }
            switch kind {
            case "payload": return "\(body["protocol"]?.string ?? "payload") \(body["field"]?.string ?? "")"
            case "meta": return "meta \(body["key"]?.string ?? "")"
            case "ct": return "ct \(body["key"]?.string ?? "")"
            case "set":
                let items = body.array ?? [body]
                return "{ " + items.prefix(16).map { text($0, depth: depth + 1) }.joined(separator: ", ") + (items.count > 16 ? ", ..." : "") + " }"
            case "range":
                let bounds = body.array ?? []
                return bounds.count == 2 ? "\(text(bounds[0], depth: depth + 1))-\(text(bounds[1], depth: depth + 1))" : "range"
            case "prefix": return "\(body["addr"].map { text($0, depth: depth + 1) } ?? "")/\(body["len"].map { text($0, depth: depth + 1) } ?? "")"
            default: return kind
            }
        }
    }
}
