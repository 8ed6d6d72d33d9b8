/// systemd-resolved's `MulticastDNS=` setting: whether resolved answers mDNS itself.
public struct ResolvedConfig: Sendable, Hashable {
    /// `yes`, `resolve` or `no` as resolved spells them (true/1/on are yes; false/0/off are no).
    public enum Mode: String, Sendable, Hashable {
        case yes, resolve, no
    }

    /// The effective value, or nil when no file sets it (resolved's default applies).
    public let multicastDNS: Mode?
    /// Where it was set, e.g. `/etc/systemd/resolved.conf.d/mdns.conf line 3`.
    public let source: String?

    /// Reads `MulticastDNS=` in `[Resolve]` from the files in the order resolved reads them
    /// (resolved.conf first, then the drop-ins sorted by name): the last setting wins. An
    /// unknown value is ignored, as resolved does.
    /// - Parameter files: (path, text) pairs.
    public init(files: [(path: String, text: String)]) {
        var mode: Mode?
        var source: String?
        for (path, text) in files {
            var section: Substring = ""
            for (number, raw) in ConfigText.lines(text) {
                let line = ConfigText.trimmed(raw)
                if line.hasPrefix("#") || line.hasPrefix(";") { continue }
                if let name = ConfigText.section(line) {
                    section = name
                    continue
                }
                guard section == "Resolve", let (key, value) = ConfigText.assignment(line), key == "MulticastDNS",
                      let parsed = Self.mode(value) else { continue }
                mode = parsed
                source = "\(path) line \(number)"
            }
        }
        multicastDNS = mode
        self.source = source
    }

    static func mode(_ value: Substring) -> Mode? {
        switch value.lowercased() {
        case "yes", "true", "1", "on": .yes
        case "no", "false", "0", "off": .no
        case "resolve": .resolve
        default: nil
        }
    }
}
