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
}

func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
