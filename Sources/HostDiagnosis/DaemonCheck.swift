/// What was seen of avahi-daemon: its process, its answers over D-Bus and its configuration.
public struct DaemonFacts: Sendable, Hashable {
    /// The daemon's answers to `org.freedesktop.Avahi.Server` calls.
    public struct Answers: Sendable, Hashable {
        /// `GetVersionString`, e.g. `avahi 0.8`.
        public var version: String
        /// `GetHostName`: the name it announces, without `.local`.
        public var hostName: String
        /// `GetState`: 0 invalid, 1 registering, 2 running, 3 collision, 4 failure.
        public var state: Int?

        public init(version: String, hostName: String, state: Int?) {
            self.version = version
            self.hostName = hostName
            self.state = state
        }
    }

    /// A running avahi-daemon.
    public struct Process: Sendable, Hashable {
        public var pid: Int32
        public var commandLine: [String]
        public init(pid: Int32, commandLine: [String]) {
            self.pid = pid
            self.commandLine = commandLine
        }
    }

    /// What asking the daemon over D-Bus gave.
    public enum Query: Sendable, Hashable {
        case answered(Answers)
        /// The daemon did not answer, with the error.
        case failed(String)
        /// It could not be asked (no `dbus-send`, or no bus), with the reason.
        case notAsked(String)
    }

    /// The avahi-daemon process in this network namespace, or nil.
    public var process: Process?
    /// Whether an `avahi-daemon` executable was found on the system.
    public var isInstalled = true
    public var busReachable = true
    public var query: Query
    /// The configuration file read, and how it was chosen (e.g. "from the daemon's -f").
    public var configPath: String
    public var configOrigin: String
    /// The parsed file, or nil when it could not be read (then `configError` says why).
    public var config: AvahiConfig?
    public var configError: String?
    /// This machine's host name (`gethostname`), the daemon's default name.
    public var systemHostName: String

    public init(query: Query, configPath: String, configOrigin: String, systemHostName: String) {
        self.query = query
        self.configPath = configPath
        self.configOrigin = configOrigin
        self.systemHostName = systemHostName
    }

    /// The answers, when the daemon gave them.
    public var answers: Answers? {
        if case .answered(let answers) = query { return answers }
        return nil
    }

    /// The name the daemon should announce: `host-name=` or the machine's name up to its first dot.
    public var expectedHostName: String {
        config?.hostName ?? String(systemHostName.prefix { $0 != "." })
    }

    /// Whether a D-Bus error is the bus's refusal of one more connection
    /// (`org.freedesktop.DBus.Error.LimitsExceeded`, as dbus-send reports it).
    public static func isConnectionLimit(_ error: String) -> Bool {
        error.contains("LimitsExceeded") || error.contains("maximum number of active connections")
    }

    /// The configuration file a daemon's command line names (`-f FILE`, `--file FILE`,
    /// `--file=FILE`), or nil.
    public static func configPath(commandLine: [String]) -> String? {
        var arguments = commandLine.dropFirst()[...]
        while let argument = arguments.popFirst() {
            if argument == "-f" || argument == "--file" { return arguments.first }
            if argument.hasPrefix("--file=") { return String(argument.dropFirst("--file=".count)) }
        }
        return nil
    }

    /// The host name in the process title Avahi sets unless `--no-proc-title`:
    /// `avahi-daemon: running [name.local]` gives `name`.
    public static func hostName(processTitle: String) -> String? {
        guard processTitle.hasPrefix("avahi-daemon: "), let open = processTitle.lastIndex(of: "["),
              processTitle.hasSuffix("]") else { return nil }
        let fqdn = processTitle[processTitle.index(after: open)..<processTitle.index(before: processTitle.endIndex)]
        let name = fqdn.prefix { $0 != "." }
        return name.isEmpty ? nil : String(name)
    }

    /// Whether `actual` is `expected` renamed after a conflict: Avahi appends `-2`, `-3`, ...
    public static func isRenaming(of expected: String, to actual: String) -> Bool {
        let prefix = expected.lowercased() + "-"
        let lowered = actual.lowercased()
        guard !expected.isEmpty, lowered.hasPrefix(prefix) else { return false }
        let suffix = lowered.dropFirst(prefix.count)
        return !suffix.isEmpty && suffix.count <= 9 && suffix.allSatisfy(\.isASCII) && suffix.allSatisfy(\.isNumber)
    }
}

extension Finding {
    /// Check 2: avahi-daemon runs, answers on the bus, announces the expected host name, and
    /// its configuration lets it work.
    public static func daemon(_ facts: DaemonFacts) -> Finding {
        let title = "avahi-daemon"
        var observed: [String] = []
        if let process = facts.process {
            observed.append("process: pid \(process.pid): \(process.commandLine.joined(separator: " "))")
        } else {
            observed.append("process: no avahi-daemon runs in this network namespace")
        }
        if let answers = facts.answers {
            observed.append("version: \(answers.version)")
            observed.append("host name: \(answers.hostName).local")
        } else if case .failed(let error) = facts.query {
            observed.append("D-Bus: the daemon did not answer: \(error)")
        } else if case .notAsked(let reason) = facts.query {
            observed.append("D-Bus: not asked: \(reason)")
        }
        observed.append("configuration: \(facts.configPath) (\(facts.configOrigin))")
        if let config = facts.config {
            observed.append("allow-interfaces=\(config.allowInterfaces?.joined(separator: ",") ?? "(not set: all)")")
            observed.append("deny-interfaces=\(config.denyInterfaces.isEmpty ? "(not set)" : config.denyInterfaces.joined(separator: ","))")
            observed.append("use-ipv4=\(config.useIPv4 ? "yes" : "no") use-ipv6=\(config.useIPv6 ? "yes" : "no") enable-reflector=\(config.enableReflector ? "yes" : "no")")
            observed += config.malformedLines.map { "configuration \($0)" }
        } else if let error = facts.configError {
            observed.append("configuration: \(error)")
        }

        guard facts.answers != nil || facts.process != nil else {
            let fixes = facts.isInstalled
                ? (facts.busReachable ? [] : ["start D-Bus first (see the bus check)"]) + ["sudo systemctl start avahi-daemon"]
                : ["sudo apt-get install avahi-daemon", "sudo systemctl enable --now avahi-daemon"]
            let summary = facts.isInstalled ? "avahi-daemon is not running" : "avahi-daemon is not installed"
            return Finding(check: "avahi-daemon", title: title, status: .problem, summary: summary, observed: observed, fixes: fixes)
        }
        guard let answers = facts.answers else {
            // It runs, but the compat library reaches it only over the bus.
            if !facts.busReachable {
                return Finding(check: "avahi-daemon", title: title, status: .problem,
                               summary: "avahi-daemon runs but cannot be reached: the system bus is down",
                               observed: observed, fixes: ["sudo systemctl start dbus", "sudo systemctl restart avahi-daemon"])
            }
            if case .notAsked = facts.query {
                return Finding(check: "avahi-daemon", title: title, status: .warning,
                               summary: "avahi-daemon runs; its version and host name are unknown", observed: observed,
                               fixes: ["sudo apt-get install dbus-bin   (for dbus-send, to ask the daemon)"])
            }
            if case .failed(let error) = facts.query, DaemonFacts.isConnectionLimit(error) {
                // The bus refused our connection, not the daemon an answer: a restart frees nothing.
                return Finding(check: "avahi-daemon", title: title, status: .problem,
                               summary: "the system bus refuses more connections from this user, so avahi-daemon (running) cannot be asked",
                               observed: observed,
                               fixes: ["end some of the programs connected to the system bus ('busctl --system list' lists them)",
                                       "or raise max_connections_per_user (256 by default) in a <limit> of /etc/dbus-1/system-local.conf, then 'sudo systemctl reload dbus'"])
            }
            return Finding(check: "avahi-daemon", title: title, status: .problem,
                           summary: "avahi-daemon runs but does not answer on the system bus", observed: observed,
                           fixes: ["sudo systemctl restart avahi-daemon"])
        }
        let configFile = facts.configPath
        if let config = facts.config, !config.useIPv4 && !config.useIPv6 {
            return Finding(check: "avahi-daemon", title: title, status: .problem,
                           summary: "use-ipv4 and use-ipv6 are both off: Avahi uses no protocol", observed: observed,
                           fixes: ["use-ipv4=yes in [server] of \(configFile)", "sudo systemctl restart avahi-daemon"])
        }
        if answers.state == 3 {
            return Finding(check: "avahi-daemon", title: title, status: .problem,
                           summary: "avahi-daemon has a host name conflict and announces nothing until it is resolved",
                           observed: observed, fixes: ["host-name=A-UNIQUE-NAME in [server] of \(configFile)", "sudo systemctl restart avahi-daemon"])
        }
        let expected = facts.expectedHostName
        if DaemonFacts.isRenaming(of: expected, to: answers.hostName) {
            observed.append("expected host name: \(expected).local (\(facts.config?.hostName != nil ? "host-name= in \(configFile)" : "the machine's host name"))")
            return Finding(check: "avahi-daemon", title: title, status: .warning,
                           summary: "another machine on the network is called \(expected).local, so Avahi renamed this one \(answers.hostName).local",
                           observed: observed,
                           fixes: ["give one of the two machines another name: sudo hostnamectl set-hostname NEW-NAME (or host-name=NEW-NAME in [server] of \(configFile))",
                                   "sudo systemctl restart avahi-daemon"])
        }
        if facts.config?.enableReflector == true {
            return Finding(check: "avahi-daemon", title: title, status: .warning,
                           summary: "the reflector is on: services of every network this host is on are repeated on the others",
                           observed: observed, fixes: ["enable-reflector=no in [reflector] of \(configFile)", "sudo systemctl restart avahi-daemon"])
        }
        if facts.config == nil {
            return Finding(check: "avahi-daemon", title: title, status: .warning,
                           summary: "avahi-daemon runs, but its configuration could not be read", observed: observed,
                           fixes: ["svc-doctor --avahi-config PATH   (the file the daemon reads)"])
        }
        return Finding(check: "avahi-daemon", title: title, status: .ok,
                       summary: "\(answers.version) runs as \(answers.hostName).local", observed: observed)
    }
}
