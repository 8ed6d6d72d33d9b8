import SafeText

/// What was seen of one unicast DNS-SD zone and its DNS server: the answer to the zone's SOA,
/// the TSIG key file and a signed update that changes nothing, and the service type's PTRs.
///
/// The probe (svc-doctor) fills it; the checks below decide. Every text here may come from the
/// network or a file: print it only through the terminal escaping.
public struct ZoneFacts: Sendable, Hashable {
    /// How the server answered the query for the zone's SOA.
    public enum ServerAnswer: Sendable, Hashable {
        /// It answered (whatever the rcode).
        case answered
        /// No server was given and /etc/resolv.conf names none (or cannot be read): why.
        case notConfigured(String)
        /// Its host said nothing listens on port 53 (ICMP port unreachable, TCP reset).
        case connectionRefused(String)
        /// No route, or the host is down.
        case unreachable(String)
        /// Nothing came back in time.
        case timeout(String)
        /// An answer that broke DNS's rules, or another failure.
        case failed(String)
    }

    /// What the SOA query said about the zone.
    public enum ZoneAnswer: Sendable, Hashable {
        /// The server serves the zone; its SOA serial.
        case served(serial: UInt32)
        /// It answered without the zone's SOA.
        case noSOA
        /// It does not serve the zone (REFUSED, NXDOMAIN, NOTAUTH: the rcode's name).
        case notServed(String)
    }

    /// What became of the TSIG key.
    public enum KeyState: Sendable, Hashable {
        /// The file cannot be used (unreadable, readable by others, not `tsig-keygen`'s form).
        case unusable(String)
        /// The server accepted a signed update that changes nothing; the key's name.
        case accepted(String)
        /// The server did not accept the signature (bad key or secret, or clock skew).
        case badSignature(String)
        /// The server refused the update signed with the key (not granted for the zone).
        case refused(String)
        /// The update could not be sent or answered.
        case failed(String)
    }

    /// What the type's PTR records said.
    public enum Records: Sendable, Hashable {
        /// How many instances the type has, and the first few names.
        case listed(count: Int, names: [String])
        case failed(String)
    }

    /// The zone, in DNS presentation form (`lab.test.`).
    public var zone: String
    /// The server's address, and where it came from (`--dns-server`, `/etc/resolv.conf`).
    public var server: String
    public var serverSource: String
    /// The query that recommended the zone, when it was found rather than given.
    public var recommendedBy: String?
    /// The service type looked for (`_p2pipp._tcp`).
    public var type: String
    public var serverAnswer: ServerAnswer
    /// nil when the server did not answer.
    public var zoneAnswer: ZoneAnswer?
    /// nil when no key was given (or the zone is not served).
    public var key: KeyState?
    /// The path of the key file given.
    public var keyPath: String?
    /// nil when the zone is not served.
    public var records: Records?

    public init(zone: String, server: String, serverSource: String, recommendedBy: String? = nil, type: String, serverAnswer: ServerAnswer,
                zoneAnswer: ZoneAnswer? = nil, key: KeyState? = nil, keyPath: String? = nil, records: Records? = nil) {
        self.zone = zone
        self.server = server
        self.serverSource = serverSource
        self.recommendedBy = recommendedBy
        self.type = type
        self.serverAnswer = serverAnswer
        self.zoneAnswer = zoneAnswer
        self.key = key
        self.keyPath = keyPath
        self.records = records
    }

    /// The name the zone file would have, for BIND lines (`lab.test`).
    var bareZone: String { zone.hasSuffix(".") && zone.count > 1 ? String(zone.dropLast()) : zone }
}

extension Finding {
    /// The wide-area checks of one zone, in order: the server, the zone, the key (when one was
    /// given), the service type's records. A check that cannot run because an earlier one
    /// failed is left out: its cause is already reported.
    public static func zone(_ facts: ZoneFacts) -> [Finding] {
        var findings = [dnsServer(facts)]
        guard let zoneAnswer = facts.zoneAnswer else { return findings }
        findings.append(dnsZone(facts, zoneAnswer))
        guard case .served = zoneAnswer else { return findings }
        if let key = facts.key { findings.append(tsigKey(facts, key)) }
        if let records = facts.records { findings.append(dnsRecords(facts, records)) }
        return findings
    }

    private static func seen(_ facts: ZoneFacts) -> [String] {
        ["zone: \(facts.zone)" + (facts.recommendedBy.map { " (recommended by \($0))" } ?? " (--domain)"),
         "DNS server: \(facts.server) (from \(facts.serverSource))"]
    }

    static func dnsServer(_ facts: ZoneFacts) -> Finding {
        let title = "DNS server of \(facts.zone)"
        var observed = seen(facts)
        let serverFix = facts.serverSource == "--dns-server" ? "check the address given to --dns-server"
            : "check the nameserver line of /etc/resolv.conf, or give the zone's server with --dns-server"
        switch facts.serverAnswer {
        case .answered:
            return Finding(check: "dns-server", title: title, status: .ok, summary: "\(facts.server) answers DNS queries", observed: observed)
        case .notConfigured(let why):
            observed.append("resolv.conf: \(why)")
            return Finding(check: "dns-server", title: title, status: .problem,
                           summary: "no DNS server is configured for \(facts.zone)", observed: observed,
                           fixes: ["svc-doctor --domain \(facts.zone) --dns-server ADDRESS   (the zone's server: ask its administrator)",
                                   "or add the line 'nameserver ADDRESS' to /etc/resolv.conf"])
        case .connectionRefused(let why):
            observed.append("query: \(why)")
            return Finding(check: "dns-server", title: title, status: .problem,
                           summary: "\(facts.server) is reachable but nothing listens on its DNS port (53)",
                           observed: observed,
                           fixes: [serverFix, "ask the DNS administrator to run named there and listen on that address:   listen-on port 53 { \(facts.server); };   (named.conf options)"])
        case .unreachable(let why):
            observed.append("query: \(why)")
            return Finding(check: "dns-server", title: title, status: .problem,
                           summary: "\(facts.server) cannot be reached from this host (no route, or the host is down)",
                           observed: observed, fixes: [serverFix, "check this host's route to \(facts.server):   ip route get \(facts.server)"])
        case .timeout(let why):
            observed.append("query: \(why)")
            return Finding(check: "dns-server", title: title, status: .problem,
                           summary: "\(facts.server) did not answer in time: a firewall may drop DNS, or the server is overloaded",
                           observed: observed,
                           fixes: [serverFix, "ask the network administrator to let UDP and TCP port 53 from this host through to \(facts.server)",
                                   "ask the DNS administrator to answer this host:   allow-query { any; };   (or its subnet; named.conf options)"])
        case .failed(let why):
            observed.append("query: \(why)")
            return Finding(check: "dns-server", title: title, status: .problem,
                           summary: "\(facts.server) did not give a usable answer", observed: observed,
                           fixes: [serverFix + " (is it a DNS server?)"])
        }
    }

    static func dnsZone(_ facts: ZoneFacts, _ answer: ZoneFacts.ZoneAnswer) -> Finding {
        let title = "DNS zone \(facts.zone)"
        var observed = seen(facts)
        let bind = "zone \"\(facts.bareZone)\" { type primary; file \"/var/lib/bind/\(facts.bareZone).db\"; update-policy { grant KEY-NAME zonesub ANY; }; };   (named.conf on \(facts.server))"
        switch answer {
        case .served(let serial):
            observed.append("SOA serial: \(serial)")
            return Finding(check: "dns-zone", title: title, status: .ok, summary: "\(facts.server) serves \(facts.zone)", observed: observed)
        case .noSOA:
            observed.append("SOA: none in the answer")
            return Finding(check: "dns-zone", title: title, status: .problem,
                           summary: "\(facts.server) answers for \(facts.zone) but is not its primary server (no SOA)",
                           observed: observed, fixes: ["give the zone's primary server with --dns-server (dig SOA \(facts.zone) names it)"])
        case .notServed(let rcode):
            observed.append("SOA query: \(rcode)")
            return Finding(check: "dns-zone", title: title, status: .problem,
                           summary: "\(facts.server) does not serve the zone \(facts.zone)",
                           observed: observed,
                           fixes: ["check --domain (the zone's exact name) and the server", "ask the DNS administrator to serve the zone there:   \(bind)"])
        }
    }

    static func tsigKey(_ facts: ZoneFacts, _ key: ZoneFacts.KeyState) -> Finding {
        let title = "TSIG key for \(facts.zone)"
        var observed = seen(facts)
        if let path = facts.keyPath { observed.append("key file: \(path)") }
        let grant = "update-policy { grant KEY-NAME zonesub ANY; };   (in the zone \"\(facts.bareZone)\" of named.conf on \(facts.server), with the key's file included)"
        switch key {
        case .accepted(let name):
            observed.append("a signed update that changes nothing: accepted (key \(name))")
            return Finding(check: "tsig-key", title: title, status: .ok,
                           summary: "the key file is yours alone and \(facts.server) accepts its signature", observed: observed)
        case .unusable(let why):
            observed.append("key file: \(why)")
            return Finding(check: "tsig-key", title: title, status: .problem, summary: "the key file cannot be used",
                           observed: observed,
                           fixes: ["chmod 600 \(facts.keyPath ?? "KEY-FILE")   (when others may read it)",
                                   "or ask the DNS administrator for the key file 'tsig-keygen -a hmac-sha256 KEY-NAME' wrote"])
        case .badSignature(let why):
            observed.append("signed update: \(why)")
            return Finding(check: "tsig-key", title: title, status: .problem,
                           summary: "\(facts.server) does not accept this key's signature (another key or secret, or this host's clock is off by more than 5 minutes)",
                           observed: observed,
                           fixes: ["ask the DNS administrator for the key the zone grants (the same name and secret as in named.conf)",
                                   "check this host's clock:   timedatectl"])
        case .refused(let why):
            observed.append("signed update: \(why)")
            return Finding(check: "tsig-key", title: title, status: .problem,
                           summary: "\(facts.server) refuses updates signed with this key in \(facts.zone)",
                           observed: observed, fixes: ["ask the DNS administrator to grant the key:   \(grant)"])
        case .failed(let why):
            observed.append("signed update: \(why)")
            return Finding(check: "tsig-key", title: title, status: .problem,
                           summary: "the signed update that changes nothing failed", observed: observed,
                           fixes: ["run svc-doctor again; if it fails again, show this to the DNS administrator"])
        }
    }

    static func dnsRecords(_ facts: ZoneFacts, _ records: ZoneFacts.Records) -> Finding {
        let title = "\(facts.type) services in \(facts.zone)"
        var observed = seen(facts)
        switch records {
        case .listed(let count, let names):
            // Quoted as svc-browse shows names: one from the zone cannot hide a character or pass for two.
            observed += names.map { "instance: " + TerminalSafe.quoted($0) }
            if count > names.count { observed.append("and \(count - names.count) more") }
            guard count > 0 else {
                return Finding(check: "dns-records", title: title, status: .warning,
                               summary: "no \(facts.type) service is registered in \(facts.zone)",
                               observed: observed,
                               fixes: ["svc-publish --domain \(facts.zone) --dns-server \(facts.server) --tsig-key KEY-FILE   (on the host that hosts the room)"])
            }
            return Finding(check: "dns-records", title: title, status: .ok,
                           summary: "\(count) \(facts.type) service\(count == 1 ? " is" : "s are") registered in \(facts.zone)", observed: observed)
        case .failed(let why):
            observed.append("PTR query: \(why)")
            return Finding(check: "dns-records", title: title, status: .problem,
                           summary: "the \(facts.type) records of \(facts.zone) could not be read", observed: observed,
                           fixes: ["run svc-doctor again; if it fails again, show this to the DNS administrator"])
        }
    }
}
