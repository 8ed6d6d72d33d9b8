/// A service instance name to publish: 1 to 63 bytes of UTF-8 with no control characters
/// (RFC 6763 §4.1.1). Spaces, dots, backslashes and any other Unicode are allowed as they are.
///
/// Names received from the network are kept as plain `String`s, since a peer may send anything.
public struct InstanceName: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    /// - Throws: `DiscoveryError` with code `.invalidInstanceName`.
    public init(_ value: String) throws(DiscoveryError) {
        let bytes = value.utf8.count
        guard bytes >= 1, bytes <= 63 else {
            throw DiscoveryError(.invalidInstanceName,
                                 "instance name is \(bytes) bytes of UTF-8; it must be 1 to 63 bytes")
        }
        if let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw DiscoveryError(.invalidInstanceName,
                                 "instance name contains the control character U+\(hex4(bad.value)); use printable characters only")
        }
        self.value = value
    }

    public var description: String { value }

    /// The name to try after a conflict, as Bonjour and Avahi choose it: `name` becomes
    /// `name #2`, `name #2` becomes `name #3`. The base is shortened by whole characters when
    /// the result would pass 63 bytes.
    public var alternative: InstanceName {
        var base = Substring(value)
        var number = 2
        if let hash = value.lastIndex(of: "#"), hash > value.startIndex,
           value[value.index(before: hash)] == " ", let current = Int(value[value.index(after: hash)...]), current >= 1 {
            base = value[..<value.index(before: hash)]
            number = current + 1
        }
        let suffix = " #\(number)"
        while base.utf8.count + suffix.utf8.count > 63 { base = base.dropLast() }
        return try! InstanceName(String(base) + suffix) // only shortened, never emptied: the suffix is at most 20 bytes
    }
}

func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
