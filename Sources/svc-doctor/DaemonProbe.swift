import Glibc
import HostDiagnosis
import SystemCommand

/// Gathers `DaemonFacts`: the daemon's process in this network namespace, its answers over
/// D-Bus (`dbus-send`), and the configuration file it reads.
enum DaemonProbe {
    static let defaultConfigPath = "/etc/avahi/avahi-daemon.conf"

    static func facts(busReachable: Bool, configOverride: String?) -> DaemonFacts {
        let process = daemonProcess(busReachable: busReachable)
        // The -f of a process that is not the installed daemon is never read: anyone can start
        // a program named avahi-daemon with -f naming a file only root may read.
        let (path, origin): (String, String) = if let configOverride {
            (configOverride, "given with --avahi-config")
        } else if let fromDaemon = process.flatMap({ DaemonFacts.configPath(commandLine: $0.commandLine) }) {
            (fromDaemon, "from the running daemon's command line")
        } else {
            (defaultConfigPath, "the default")
        }
        var facts = DaemonFacts(query: query(busReachable: busReachable), configPath: path, configOrigin: origin, systemHostName: hostName())
        facts.process = process
        facts.busReachable = busReachable
        facts.isInstalled = BoundedCommand.locate("avahi-daemon") != nil
        do {
            facts.config = AvahiConfig(parsing: try SystemFiles.read(path))
        } catch {
            facts.configError = error.description
        }
        // Without D-Bus answers, the process title may still tell the host name.
        if facts.answers == nil, let title = process?.commandLine.first, let name = DaemonFacts.hostName(processTitle: title),
           case .notAsked(let reason) = facts.query {
            facts.query = .notAsked(reason + "; the process title says the host name is \(name).local")
        }
        return facts
    }

    /// This network namespace's avahi-daemon: among the live processes named so, one that
    /// `ProgramIdentity` confirms, preferring the owner of `org.freedesktop.Avahi` on the bus.
    static func daemonProcess(busReachable: Bool) -> DaemonFacts.Process? {
        // With chroot, Avahi forks a helper ("avahi-daemon: chroot helper"); the server is the other one.
        let candidates = Processes.named("avahi-daemon")
            .filter { !(Processes.commandLine($0).first?.contains("chroot helper") ?? false) }
            .map(Processes.identityFacts)
        let identity = ProgramIdentity.avahiDaemon(avahiUID: Processes.userID(of: "avahi"))
        let busOwner = busReachable ? try? dbusSend(["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                     "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.Avahi"]).get() : nil
        let ownerPID = busOwner.flatMap { Int32($0.split(separator: " ").last ?? "") }
        return identity.choose(among: candidates, busOwner: ownerPID).map {
            DaemonFacts.Process(pid: $0.pid, commandLine: Processes.commandLine($0.pid))
        }
    }

    /// Asks the daemon `GetVersionString`, `GetHostName` and `GetState` with `dbus-send`.
    static func query(busReachable: Bool) -> DaemonFacts.Query {
        guard busReachable else { return .notAsked("the system bus is down") }
        guard BoundedCommand.locate("dbus-send") != nil else { return .notAsked("dbus-send is not installed") }
        func call(_ method: String) -> Result<String, QueryError> {
            dbusSend(["--dest=org.freedesktop.Avahi", "/", "org.freedesktop.Avahi.Server.\(method)"])
        }
        switch (call("GetVersionString"), call("GetHostName")) {
        case (.success(let version), .success(let hostName)):
            let state = (try? call("GetState").get()).flatMap { Int($0.split(separator: " ").last ?? "") }
            return .answered(.init(version: version, hostName: hostName, state: state))
        case (.failure(let error), _), (_, .failure(let error)):
            return .failed(error.text)
        }
    }

    /// Runs `dbus-send --system --print-reply=literal` with `arguments` (destination, object,
    /// method, parameters) and gives its answer on one line, or what went wrong.
    static func dbusSend(_ arguments: [String]) -> Result<String, QueryError> {
        guard let dbusSend = BoundedCommand.locate("dbus-send") else { return .failure(QueryError(text: "dbus-send is not installed")) }
        let method = arguments.dropFirst(2).first.flatMap { $0.split(separator: ".").last.map(String.init) } ?? "call"
        // dbus-send reaches the bus this process was pointed at, and no further.
        let bus = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { ["DBUS_SYSTEM_BUS_ADDRESS=" + String(cString: $0)] } ?? []
        let command = BoundedCommand(path: dbusSend, arguments: ["--system", "--print-reply=literal", "--reply-timeout=2000"] + arguments,
                                     timeout: .seconds(3), outputLimit: 65536, environment: BoundedCommand.defaultEnvironment + bus)
        func text(_ bytes: [UInt8]) -> String {
            String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingBlanks }.joined(separator: " ")
        }
        switch command.run() {
        case .exited(0, let output, _):
            return .success(text(output))
        case .exited(let status, let output, let errorOutput):
            let said = text(errorOutput + output)
            return .failure(QueryError(text: said.isEmpty ? "dbus-send \(method) exited with status \(status)" : said))
        case .killed(let why):
            return .failure(QueryError(text: "dbus-send \(method) was stopped: \(why)"))
        case .notStarted(let why):
            return .failure(QueryError(text: "dbus-send could not run: \(why)"))
        }
    }

    struct QueryError: Error { let text: String }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Substring {
    var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
