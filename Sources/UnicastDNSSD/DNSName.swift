/// A domain name as a list of labels (the root label left out), within DNS's limits: each label
/// 1 to 63 bytes, the whole name at most 255 bytes on the wire.
///
/// Labels are bytes, not text: an instance name such as `Team room. 2` is one label that holds
/// a dot and a space. `description` shows the name in presentation form (dots in labels as
/// `\.`, other unusual bytes as `\DDD`). Comparison with `sameName(as:)` ignores ASCII case, as
/// DNS does; `==` compares bytes.
public struct DNSName: Sendable, Hashable, CustomStringConvertible {
    /// The longest label, in bytes.
    public static let maximumLabelLength = 63
    /// The longest name on the wire, in bytes (length bytes and the root's zero included).
    public static let maximumWireLength = 255

    /// The labels, most specific first, without the root.
    public let labels: [[UInt8]]

    /// A name from its labels.
    /// - Throws: `.invalidName` when a label is empty or longer than 63 bytes, or the name
    ///   longer than 255 bytes on the wire.
    public init(labels: [[UInt8]]) throws(UnicastDNSSDError) {
        var wireLength = 1
        for label in labels {
            guard !label.isEmpty, label.count <= Self.maximumLabelLength else {
                throw UnicastDNSSDError(.invalidName, "a DNS label must be 1 to \(Self.maximumLabelLength) bytes, not \(label.count); choose a shorter name")
            }
            wireLength += 1 + label.count
        }
        guard wireLength <= Self.maximumWireLength else {
            throw UnicastDNSSDError(.invalidName, "the DNS name would be \(wireLength) bytes, more than \(Self.maximumWireLength); choose a shorter name or zone")
        }
        self.labels = labels
    }

    /// A name written with dots, such as `lab.test.` (the final dot optional). Backslash
    /// escapes are not accepted: zones and host names here are plain.
    /// - Throws: `.invalidName` for an empty label (`a..b`), a backslash, or a name too long.
    public init(dotted text: String) throws(UnicastDNSSDError) {
        var body = Substring(text)
        if body.hasSuffix(".") { body = body.dropLast() }
        guard !body.isEmpty else { try self.init(labels: []); return }
        guard !body.contains("\\") else {
            throw UnicastDNSSDError(.invalidName, "'\(String(body).debugDescription.dropFirst().dropLast())' contains a backslash; write the name with plain labels such as lab.example.")
        }
        try self.init(labels: body.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) })
    }

    /// This name with `label` in front (`_p2pipp._tcp` + instance, for example).
    /// - Throws: `.invalidName` when the result breaks the limits.
    public func prepending(_ label: [UInt8]) throws(UnicastDNSSDError) -> DNSName {
        try DNSName(labels: [label] + labels)
    }

    /// This name followed by `suffix` (`myhost` + `lab.test.`).
    public func appending(_ suffix: DNSName) throws(UnicastDNSSDError) -> DNSName {
        try DNSName(labels: labels + suffix.labels)
    }

    /// The uncompressed wire form: length-prefixed labels, then a zero byte.
    public var wire: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.maximumWireLength)
        for label in labels {
            bytes.append(UInt8(label.count))
            bytes.append(contentsOf: label)
        }
        bytes.append(0)
        return bytes
    }

    /// Reads an uncompressed wire-form name that fills `bytes` exactly; nil when it breaks any
    /// rule (a compression pointer, a label past the end, bytes after the root, too long).
    public init?(wire bytes: [UInt8]) {
        guard bytes.count <= Self.maximumWireLength else { return nil }
        var labels: [[UInt8]] = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            if length == 0 {
                guard index == bytes.count - 1, let name = try? DNSName(labels: labels) else { return nil }
                self = name
                return
            }
            guard length <= Self.maximumLabelLength, bytes.count - index - 1 >= length else { return nil }
            labels.append(Array(bytes[(index + 1)...(index + length)]))
            index += 1 + length
        }
        return nil
    }

    /// Whether the name is `local.` or under it (its last label is `local`, in any case):
    /// multicast DNS's, never asked of a unicast DNS server (RFC 6762 section 3).
    public var isLinkLocal: Bool { labels.last.map { Self.lowercased($0) == Array("local".utf8) } ?? false }

    /// Whether the two names are equal, ignoring ASCII case as DNS does.
    public func sameName(as other: DNSName) -> Bool {
        labels.count == other.labels.count && zip(labels, other.labels).allSatisfy { Self.lowercased($0) == Self.lowercased($1) }
    }

    /// Whether this name is `zone` or below it (ignoring ASCII case).
    public func isWithin(_ zone: DNSName) -> Bool {
        guard labels.count >= zone.labels.count else { return false }
        return zip(labels.suffix(zone.labels.count), zone.labels).allSatisfy { Self.lowercased($0) == Self.lowercased($1) }
    }

    /// The name one label shorter (the parent), or nil for the root.
    public var parent: DNSName? {
        labels.isEmpty ? nil : try? DNSName(labels: Array(labels.dropFirst()))
    }

    static func lowercased(_ label: [UInt8]) -> [UInt8] {
        label.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
    }

    /// The presentation form, ending in a dot: `.` and `\` in a label escaped with a
    /// backslash, bytes outside printable ASCII (and space) as `\DDD`.
    public var description: String {
        guard !labels.isEmpty else { return "." }
        var text = ""
        for label in labels {
            for byte in label {
                switch byte {
                case UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: ";"), UInt8(ascii: "("), UInt8(ascii: ")"):
                    text += "\\" + String(UnicodeScalar(byte))
                case 0x21...0x7E:
                    text += String(UnicodeScalar(byte))
                default:
                    let digits = String(byte)
                    text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
                }
            }
            text += "."
        }
        return text
    }
}
