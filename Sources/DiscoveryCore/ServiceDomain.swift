/// A DNS domain to browse or register in, normalised to end with a dot, e.g. `local.`.
public struct ServiceDomain: Sendable, Hashable, CustomStringConvertible {
    /// The name with its trailing dot.
    public let name: String

    public static let local = ServiceDomain(normalised: "local.")

    private init(normalised: String) { name = normalised }

    /// Accepts `local`, `local.` or any domain of labels of 1 to 63 bytes, 253 bytes in all.
    /// - Throws: `DiscoveryError` with code `.invalidDomain`.
    public init(_ text: String) throws(DiscoveryError) {
        var body = text
        if body.hasSuffix(".") { body.removeLast() }
        func invalid(_ why: String) -> DiscoveryError {
            DiscoveryError(.invalidDomain, "invalid domain '\(text)': \(why); for the local network use local.")
        }
        guard !body.isEmpty, body.utf8.count <= 253 else { throw invalid("it must be 1 to 253 bytes") }
        for label in body.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63 else { throw invalid("each label must be 1 to 63 bytes") }
            guard !label.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
                throw invalid("labels may not hold spaces or control characters")
            }
        }
        name = body.lowercased() + "."
    }

    /// A domain as the daemon reports it (with or without a trailing dot), kept as given.
    public init(reported text: String) {
        name = text.hasSuffix(".") ? text : text + "."
    }

    public var description: String { name }
}
