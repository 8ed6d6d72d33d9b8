/// The `hosts:` line of /etc/nsswitch.conf: which sources the C library asks for host names,
/// and whether one of them is nss-mdns (so every program resolves `.local` names).
public struct NSSHosts: Sendable, Hashable {
    /// The sources in order, without `[action]` blocks, e.g. `["files", "mdns4_minimal", "dns"]`.
    public let sources: [String]
    /// The line as written.
    public let line: String

    /// The sources nss-mdns provides.
    public static let mdnsSources: Set<String> = ["mdns", "mdns4", "mdns6", "mdns_minimal", "mdns4_minimal", "mdns6_minimal"]

    /// The `hosts:` line Debian's libnss-mdns package writes.
    public static let recommendedLine = "hosts: files mdns4_minimal [NOTFOUND=return] dns"

    /// The nss-mdns sources the line names.
    public var mdnsSources: [String] { sources.filter { Self.mdnsSources.contains($0) } }

    /// Reads the first `hosts:` line of nsswitch.conf text (as glibc does), or returns nil
    /// when there is none. Comments (`#` to the end of the line) are ignored.
    public init?(parsing text: String) {
        for (_, raw) in ConfigText.lines(text) {
            let line = ConfigText.trimmed(raw.prefix { $0 != "#" })
            guard line.hasPrefix("hosts:") else { continue }
            var sources: [String] = []
            var inAction = false
            for word in line.dropFirst("hosts:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if word.hasPrefix("[") { inAction = true }
                if !inAction { sources.append(String(word)) }
                if word.hasSuffix("]") { inAction = false }
            }
            self.sources = sources
            self.line = String(line)
            return
        }
        return nil
    }
}
