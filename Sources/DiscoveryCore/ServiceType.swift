/// A DNS-SD service type such as `_p2pipp._tcp`, with optional subtypes.
///
/// The service name follows RFC 6335 §5.1: 1 to 15 letters, digits and hyphens, at least one
/// letter, no hyphen at either end and no two in a row. Subtypes are written after a comma, as
/// `dns_sd.h` expects: `_http._tcp,_printer`.
public struct ServiceType: Sendable, Hashable, CustomStringConvertible {
    public enum TransportProtocol: String, Sendable, Hashable {
        case tcp = "_tcp"
        case udp = "_udp"
    }

    /// The service name without its underscore, e.g. `p2pipp`.
    public let name: String
    public let transport: TransportProtocol
    /// Subtype labels including their underscore, e.g. `_printer`.
    public let subtypes: [String]

    /// The type used throughout this project's tools.
    public static let p2pipp = ServiceType(uncheckedName: "p2pipp", transport: .tcp)

    private init(uncheckedName name: String, transport: TransportProtocol, subtypes: [String] = []) {
        self.name = name
        self.transport = transport
        self.subtypes = subtypes
    }

    /// Parses `_name._tcp`, `_name._udp` (a trailing dot is allowed), optionally followed by
    /// `,_subtype` items.
    /// - Throws: `DiscoveryError` with code `.invalidServiceType` saying which rule failed.
    public init(_ text: String) throws(DiscoveryError) {
        var parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var base = parts.removeFirst()
        if base.hasSuffix(".") { base.removeLast() }
        let labels = base.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func invalid(_ why: String) -> DiscoveryError {
            DiscoveryError(.invalidServiceType,
                           "invalid service type '\(text)': \(why); write it as _name._tcp or _name._udp, e.g. _p2pipp._tcp")
        }
        guard labels.count == 2, labels[0].hasPrefix("_") else {
            throw invalid("expected two labels, each starting with '_'")
        }
        guard let transport = TransportProtocol(rawValue: labels[1].lowercased()) else {
            throw invalid("the protocol must be _tcp or _udp, not '\(labels[1])'")
        }
        let name = String(labels[0].dropFirst())
        if let problem = Self.problem(inServiceName: name) { throw invalid(problem) }
        for subtype in parts {
            guard subtype.hasPrefix("_"), subtype.utf8.count >= 2, subtype.utf8.count <= 63,
                  !subtype.contains("."), !subtype.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw invalid("subtype '\(subtype)' must be '_' and 1 to 62 more bytes, with no dots or control characters")
            }
        }
        self.init(uncheckedName: name, transport: transport, subtypes: parts)
    }

    /// Why `name` is not a valid RFC 6335 service name, or nil when it is.
    static func problem(inServiceName name: String) -> String? {
        let scalars = Array(name.unicodeScalars)
        if scalars.isEmpty || scalars.count > 15 {
            return "the service name must be 1 to 15 characters, not \(scalars.count)"
        }
        func isLetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
        func isDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
        guard scalars.allSatisfy({ isLetter($0) || isDigit($0) || $0 == "-" }) else {
            return "the service name may hold only letters, digits and hyphens"
        }
        guard scalars.contains(where: isLetter) else { return "the service name needs at least one letter" }
        guard scalars.first != "-", scalars.last != "-" else { return "the service name may not start or end with a hyphen" }
        guard !name.contains("--") else { return "the service name may not hold two hyphens in a row" }
        return nil
    }

    /// `_name._tcp` without subtypes: what browse results report.
    public var baseType: String { "_\(name).\(transport.rawValue)" }

    /// The form `DNSServiceRegister` and `DNSServiceBrowse` take: `_name._tcp,_sub1,_sub2`.
    public var description: String { ([baseType] + subtypes).joined(separator: ",") }
}
