/// The settings of avahi-daemon.conf that decide where and how Avahi works.
///
/// Parsed like Avahi's own ini parser: `[section]` headers, `key=value` lines, comments
/// starting with `#` or `;`; a boolean is true when its value starts with `y`, `t` or `1`
/// (as Avahi's `is_yes`). Unset values keep Avahi's defaults.
public struct AvahiConfig: Sendable, Hashable {
    /// `host-name=` in `[server]`, or nil: the machine's host name.
    public var hostName: String?
    /// `allow-interfaces=` in `[server]`, or nil: every interface is allowed.
    public var allowInterfaces: [String]?
    /// `deny-interfaces=` in `[server]`.
    public var denyInterfaces: [String] = []
    /// `use-ipv4=` in `[server]` (default yes).
    public var useIPv4 = true
    /// `use-ipv6=` in `[server]` (default yes).
    public var useIPv6 = true
    /// `allow-point-to-point=` in `[server]` (default no).
    public var allowPointToPoint = false
    /// `enable-reflector=` in `[reflector]` (default no).
    public var enableReflector = false
    /// Lines that could not be read, by number and what is wrong, e.g. "line 4: no '=' (…)";
    /// never their text: the file may not be avahi's (a process can name any file with `-f`).
    public var malformedLines: [String] = []

    /// Avahi's defaults, as with an empty file.
    public init() {}

    /// Reads the settings from the text of avahi-daemon.conf (bounded: see `ConfigText`).
    public init(parsing text: String) {
        var section: Substring = ""
        for (number, raw) in ConfigText.lines(text) {
            let line = ConfigText.trimmed(raw)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if let name = ConfigText.section(line) {
                section = name
                continue
            }
            guard let (key, value) = ConfigText.assignment(line) else {
                if malformedLines.count < 20 { malformedLines.append("line \(number): no '=' (neither a setting, a [section] nor a comment)") }
                continue
            }
            switch (section, key) {
            case ("server", "host-name"): hostName = value.isEmpty ? nil : String(value)
            case ("server", "allow-interfaces"): allowInterfaces = Self.list(value)
            case ("server", "deny-interfaces"): denyInterfaces = Self.list(value)
            case ("server", "use-ipv4"): useIPv4 = Self.isYes(value)
            case ("server", "use-ipv6"): useIPv6 = Self.isYes(value)
            case ("server", "allow-point-to-point"): allowPointToPoint = Self.isYes(value)
            case ("reflector", "enable-reflector"): enableReflector = Self.isYes(value)
            default: continue
            }
        }
    }

    /// Whether the interface list settings let Avahi use `interface`.
    public func allows(_ interface: String) -> Bool {
        if denyInterfaces.contains(interface) { return false }
        return allowInterfaces.map { $0.contains(interface) } ?? true
    }

    static func isYes(_ value: Substring) -> Bool {
        guard let first = value.first else { return false }
        return "yYtT1".contains(first)
    }

    static func list(_ value: Substring) -> [String] {
        value.split(separator: ",").map { String(ConfigText.trimmed($0)) }.filter { !$0.isEmpty }
    }
}
