import DiscoveryCore

/// A service instance's full DNS-SD name (instance, type and domain) as `known_peers` writes it:
/// DNS-SD presentation form, e.g. `Living\032room._p2pipp._tcp.local.`.
///
/// In a label, `\` is written `\\`, `.` is written `\.`, space and every byte below 0x21 or equal
/// to 0x7F is written `\DDD` (three decimal digits), and so is a `#` that starts the name;
/// other UTF-8 stays as it is. Two names are the same when their labels are equal ignoring
/// ASCII case, as DNS compares them.
public struct ServiceName: Sendable, Hashable, CustomStringConvertible {
    /// The labels without escapes: the instance name, the service type's two labels, the domain's.
    public let labels: [String]

    /// The name of `instance`.
    public init(_ instance: ServiceInstance) {
        let domain = instance.domain.name.split(separator: ".").map(String.init)
        labels = [instance.name] + instance.type.baseType.split(separator: ".").map(String.init) + domain
    }

    /// Parses the presentation form; nil when an escape is malformed (`\` then neither three
    /// decimal digits up to 255 nor one character), a label is empty or longer than 63 bytes, a
    /// label is not UTF-8, a byte below 0x21 or 0x7F stands unescaped, or there are fewer than
    /// four labels (instance, `_type`, `_tcp` or `_udp`, domain).
    public init?(presentation text: String) {
        var labels: [String] = []
        var label: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        func endLabel() -> Bool {
            guard !label.isEmpty, label.count <= 63, let text = String(validating: label, as: UTF8.self) else { return false }
            labels.append(text)
            label = []
            return true
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let digits = bytes[index..<min(index + 3, bytes.count)]
                if digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }) {
                    let value = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
                    guard value <= 255 else { return nil }
                    label.append(UInt8(value))
                    index += 3
                } else if (48...57).contains(bytes[index]) {
                    return nil
                } else {
                    label.append(bytes[index])
                    index += 1
                }
            case UInt8(ascii: "."):
                guard endLabel() else { return nil }
            case ..<0x21, 0x7F:
                return nil
            default:
                label.append(byte)
            }
        }
        // The root label: a name ends with a dot, or the last label ends here.
        if !label.isEmpty { guard endLabel() else { return nil } }
        guard labels.count >= 4 else { return nil }
        self.labels = labels
    }

    /// The presentation form, ending with a dot.
    /// A leading `#` is written `\035`, so that the line is not read as a comment.
    public var presentation: String {
        let text = labels.map(Self.escaped).joined(separator: ".") + "."
        return text.hasPrefix("#") ? "\\035" + text.dropFirst() : text
    }

    public var description: String { presentation }

    /// The instance name, unescaped.
    public var instanceName: String { labels[0] }

    /// Whether both name the same service: equal labels ignoring ASCII case.
    public func isSame(as other: ServiceName) -> Bool {
        labels.count == other.labels.count && zip(labels, other.labels).allSatisfy { Self.folded($0) == Self.folded($1) }
    }

    /// One label in presentation form.
    public static func escaped(_ label: String) -> String {
        var bytes: [UInt8] = []
        for byte in label.utf8 {
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: "."): bytes += [UInt8(ascii: "\\"), byte]
            case ..<0x21, 0x7F: bytes += Array(("\\" + String(byte / 100) + String(byte / 10 % 10) + String(byte % 10)).utf8)
            // Bytes of multi-byte UTF-8 are 0x80 or more: they pass unchanged, so the result
            // stays valid UTF-8.
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func folded(_ label: String) -> [UInt8] {
        label.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }
    }
}
