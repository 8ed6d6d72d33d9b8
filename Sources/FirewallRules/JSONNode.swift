/// A JSON value, parsed from untrusted text with bounds: `nft -j` output is read with this
/// (the pure modules do not use Foundation).
enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    /// Integers only; a number with a fraction or exponent is kept as its text.
    case integer(Int)
    case number(String)
    case string(String)
    case array([JSONNode])
    /// Members in order (nft's objects have one key that says what they are).
    case object([(String, JSONNode)])

    static func == (lhs: JSONNode, rhs: JSONNode) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member `key` of an object, or nil.
    subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var string: String? { if case .string(let text) = self { text } else { nil } }
    var integer: Int? { if case .integer(let value) = self { value } else { nil } }
    var array: [JSONNode]? { if case .array(let items) = self { items } else { nil } }

    /// For an object of one member (`{"accept": null}`), that member.
    var single: (String, JSONNode)? {
        guard case .object(let members) = self, members.count == 1 else { return nil }
        return members[0]
    }

    /// Parses `text`, or throws saying where it stopped. Nesting deeper than `maximumDepth` is
    /// refused (before it can exhaust the stack).
    static func parse(_ text: String, maximumDepth: Int) throws(FirewallParseError) -> JSONNode {
        var parser = JSONParser(bytes: Array(text.utf8), maximumDepth: maximumDepth)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == parser.bytes.count else { throw parser.failure("text after the JSON value") }
        return value
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maximumDepth: Int
    var position = 0

    func failure(_ what: String) -> FirewallParseError {
        FirewallParseError("nft's JSON is malformed at byte \(position): \(what)")
    }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    mutating func value(depth: Int) throws(FirewallParseError) -> JSONNode {
        guard depth <= maximumDepth else { throw failure("nested deeper than \(maximumDepth)") }
        skipSpace()
        guard position < bytes.count else { throw failure("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var members: [(String, JSONNode)] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object([]) }
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
                let key = try string()
                skipSpace()
                try expect(":")
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                if try endOf("}") { return .object(members) }
            }
        case UInt8(ascii: "["):
            position += 1
            var items: [JSONNode] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array([]) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                if try endOf("]") { return .array(items) }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            return try number()
        }
    }

    /// After a member or item: `,` (more follow) or `close` (the end).
    mutating func endOf(_ close: Unicode.Scalar) throws(FirewallParseError) -> Bool {
        guard position < bytes.count else { throw failure("unexpected end") }
        if bytes[position] == UInt8(ascii: ",") { position += 1; return false }
        if bytes[position] == UInt8(ascii: close) { position += 1; return true }
        throw failure("expected ',' or '\(close)'")
    }

    mutating func expect(_ character: Unicode.Scalar) throws(FirewallParseError) {
        guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { throw failure("expected '\(character)'") }
        position += 1
    }

    mutating func literal(_ word: String) throws(FirewallParseError) {
        let expected = Array(word.utf8)
        guard bytes.count - position >= expected.count, Array(bytes[position..<position + expected.count]) == expected else {
            throw failure("unexpected character")
        }
        position += expected.count
    }

    mutating func number() throws(FirewallParseError) -> JSONNode {
        let start = position
        while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
        guard position > start, position - start <= 40 else { throw failure("unexpected character") }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if let integer = Int(text) { return .integer(integer) }
        guard text.contains(where: { $0.isNumber }) else { throw failure("not a number") }
        return .number(text)
    }

    mutating func string() throws(FirewallParseError) -> String {
        position += 1 // the opening quote
        var scalars = String.UnicodeScalarView()
        var run = position
        func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars) }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                flush(position)
                position += 1
                return String(scalars)
            }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            guard byte == UInt8(ascii: "\\") else { position += 1; continue }
            flush(position)
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), bytes.count - position >= 6,
                   bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("a broken surrogate pair") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default:
                throw failure("an unknown escape")
            }
            run = position
        }
        throw failure("an unterminated string")
    }

    mutating func hex4() throws(FirewallParseError) -> UInt32 {
        guard bytes.count - position >= 4,
              let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else {
            throw failure("a bad \\u escape")
        }
        position += 4
        return code
    }
}
