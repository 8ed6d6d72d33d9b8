import TransportCore

/// What was seen on UDP port 5353: the sockets bound to it and the processes holding them,
/// and systemd-resolved's mDNS setting.
public struct ResponderFacts: Sendable, Hashable {
    /// A process holding a socket.
    public struct Owner: Sendable, Hashable {
        public var pid: Int32
        /// `/proc/PID/comm` (at most 15 characters), e.g. `systemd-resolve`.
        public var name: String
        public var commandLine: String
        /// Whether it is the installed systemd-resolved (`ProgramIdentity`), not merely named so.
        public var isSystemdResolved: Bool
        public init(pid: Int32, name: String, commandLine: String, isSystemdResolved: Bool = false) {
            self.pid = pid
            self.name = name
            self.commandLine = commandLine
            self.isSystemdResolved = isSystemdResolved
        }
    }

    /// A UDP socket bound to 5353 and who holds it (empty when no process could be seen:
    /// another user's, without root).
    public struct BoundSocket: Sendable, Hashable {
        public var address: IPAddress
        /// The user that opened it (from /proc/net/udp, readable by everyone).
        public var uid: UInt32
        public var owners: [Owner]
        public init(address: IPAddress, uid: UInt32, owners: [Owner]) {
            self.address = address
            self.uid = uid
            self.owners = owners
        }
    }

    public var sockets: [BoundSocket]
    /// Why /proc/net/udp or udp6 could not be read, if so.
    public var readErrors: [String] = []
    /// The pid of this namespace's avahi-daemon (confirmed by `ProgramIdentity`), whose sockets
    /// are expected; a process merely named `avahi-daemon` is another program.
    public var daemonPID: Int32?
    /// The user avahi-daemon runs as: without root its sockets' owners cannot be seen, but a
    /// socket of that user is taken for the daemon's.
    public var daemonUID: UInt32?
    public var resolved: ResolvedConfig
    /// Whether systemd-resolved runs (confirmed by `ProgramIdentity`).
    public var resolvedRunning: Bool

    public init(sockets: [BoundSocket], daemonPID: Int32?, resolved: ResolvedConfig, resolvedRunning: Bool) {
        self.sockets = sockets
        self.daemonPID = daemonPID
        self.resolved = resolved
        self.resolvedRunning = resolvedRunning
    }
}

extension Finding {
    /// Check 3: nobody but avahi-daemon receives mDNS on UDP 5353.
    ///
    /// systemd-resolved holding 5353 is a problem (two responders answer for this host and
    /// contend for the port); any other program is a warning (a browser or a library may hold
    /// the port harmlessly, but unicast replies can reach it instead of Avahi); a socket whose
    /// owner cannot be seen is a warning, unless it belongs to avahi-daemon's user.
    public static func responders(_ facts: ResponderFacts) -> Finding {
        let title = "other mDNS responders"
        var observed: [String] = []
        var others: [ResponderFacts.Owner] = []
        var unknown: [IPAddress] = []
        for socket in facts.sockets {
            if socket.owners.isEmpty {
                if let uid = facts.daemonUID, socket.uid == uid, uid != 0 {
                    observed.append("UDP \(socket.address):5353 held by uid \(uid): avahi-daemon's user")
                } else {
                    unknown.append(socket.address)
                }
            }
            for owner in socket.owners {
                let isDaemon = owner.pid == facts.daemonPID
                let impostor = !isDaemon && !owner.isSystemdResolved && Self.impersonated.contains(owner.name)
                    ? ", not the installed \(owner.name == "avahi-daemon" ? "avahi-daemon" : "systemd-resolved")" : ""
                observed.append("UDP \(socket.address):5353 held by pid \(owner.pid) (\(owner.name)\(impostor))\(isDaemon ? ": avahi-daemon" : ": \(owner.commandLine)")")
                if !isDaemon && !others.contains(where: { $0.pid == owner.pid }) { others.append(owner) }
            }
        }
        for address in unknown { observed.append("UDP \(address):5353 held by a process that cannot be seen (not root?)") }
        if facts.sockets.isEmpty { observed.append("no UDP socket is bound to port 5353") }
        observed += facts.readErrors
        let setting = facts.resolved.multicastDNS.map { "MulticastDNS=\($0.rawValue) (\(facts.resolved.source ?? ""))" } ?? "MulticastDNS= not set"
        observed.append("systemd-resolved: \(facts.resolvedRunning ? "running" : "not running"), \(setting)")

        let resolved = others.filter(\.isSystemdResolved)
        if !resolved.isEmpty {
            return Finding(check: "responders", title: title, status: .problem,
                           summary: "systemd-resolved answers mDNS on UDP 5353 beside avahi-daemon",
                           observed: observed,
                           fixes: ["MulticastDNS=no in [Resolve] of /etc/systemd/resolved.conf", "sudo systemctl restart systemd-resolved"])
        }
        if !others.isEmpty || !unknown.isEmpty {
            let names = others.map { "\($0.name) (pid \($0.pid))" } + (unknown.isEmpty ? [] : ["a process that cannot be seen"])
            return Finding(check: "responders", title: title, status: .warning,
                           summary: "\(names.joined(separator: ", ")) also \(names.count == 1 ? "holds" : "hold") UDP port 5353: replies meant for Avahi may reach \(names.count == 1 ? "it" : "them")",
                           observed: observed,
                           fixes: others.map { "stop or reconfigure pid \($0.pid): \($0.commandLine)" }
                            + (unknown.isEmpty ? [] : ["sudo svc-doctor   (as root, to see which process holds the port)"]))
        }
        if facts.resolvedRunning, let mode = facts.resolved.multicastDNS, mode != .no {
            return Finding(check: "responders", title: title, status: .warning,
                           summary: "systemd-resolved is set to answer mDNS (MulticastDNS=\(mode.rawValue)) once a link enables it",
                           observed: observed,
                           fixes: ["MulticastDNS=no in [Resolve] of /etc/systemd/resolved.conf", "sudo systemctl restart systemd-resolved"])
        }
        return Finding(check: "responders", title: title, status: .ok,
                       summary: "no other program holds UDP port 5353", observed: observed)
    }

    /// The names of the programs this check recognizes (`comm`, at most 15 characters).
    static let impersonated: Set<String> = ["avahi-daemon", "systemd-resolve", "systemd-resolved"]
}
