/// What was seen of nss-mdns: the `hosts:` line and the installed libraries.
public struct NSSFacts: Sendable, Hashable {
    /// The parsed `hosts:` line, or nil when nsswitch.conf has none or could not be read.
    public var hosts: NSSHosts?
    /// Why /etc/nsswitch.conf could not be read, if so.
    public var readError: String?
    /// The `libnss_mdns*` files found.
    public var libraries: [String]

    public init(hosts: NSSHosts?, readError: String?, libraries: [String]) {
        self.hosts = hosts
        self.readError = readError
        self.libraries = libraries
    }
}

extension Finding {
    /// Check 6: other programs resolve `.local` names (ping, ssh, browsers); svc tools do not
    /// need it (they ask avahi-daemon), so this is at most a warning.
    public static func nss(_ facts: NSSFacts) -> Finding {
        let title = "nss-mdns (.local names for other programs)"
        var observed: [String] = []
        if let hosts = facts.hosts { observed.append("/etc/nsswitch.conf: \(hosts.line)") }
        else { observed.append("/etc/nsswitch.conf: \(facts.readError ?? "no hosts: line")") }
        observed.append(facts.libraries.isEmpty ? "libnss_mdns: not installed" : "libnss_mdns: \(facts.libraries.joined(separator: ", "))")
        let configured = !(facts.hosts?.mdnsSources.isEmpty ?? true)
        if facts.libraries.isEmpty {
            return Finding(check: "nss-mdns", title: title, status: .warning,
                           summary: "nss-mdns is not installed: programs other than svc cannot resolve .local names",
                           observed: observed,
                           fixes: ["sudo apt-get install libnss-mdns"] + (configured ? [] : ["\(NSSHosts.recommendedLine)   (in /etc/nsswitch.conf)"]))
        }
        if !configured {
            return Finding(check: "nss-mdns", title: title, status: .warning,
                           summary: "nss-mdns is installed but the hosts: line does not use it",
                           observed: observed, fixes: ["\(NSSHosts.recommendedLine)   (in /etc/nsswitch.conf)"])
        }
        return Finding(check: "nss-mdns", title: title, status: .ok,
                       summary: "other programs resolve .local names through nss-mdns", observed: observed)
    }
}
