/// Whether a process is really a given system program, not merely named like it.
///
/// A process's name (`/proc/PID/comm`) and command line are chosen by whoever starts it: any
/// local user can run a file called `avahi-daemon` with `-f /etc/shadow`. So a process counts as
/// the program only when its real user is one the program runs as (root or its own system user:
/// only root can start a process as either) and its executable (`/proc/PID/exe`) is the installed
/// binary. The executable cannot be read for another user's process without root; then the user
/// alone decides, which no unprivileged user can fake.
public struct ProgramIdentity: Sendable, Hashable {
    /// What was read about one process.
    public struct ProcessFacts: Sendable, Hashable {
        public var pid: Int32
        /// The target of `/proc/PID/exe`, or nil when it could not be read.
        public var executable: String?
        /// The real user id from `/proc/PID/status`, or nil when it could not be read.
        public var realUID: UInt32?

        public init(pid: Int32, executable: String?, realUID: UInt32?) {
            self.pid = pid
            self.executable = executable
            self.realUID = realUID
        }
    }

    /// The program's name for messages, e.g. `avahi-daemon`.
    public var program: String
    /// Where the installed binary may be (both sides of the /usr merge).
    public var executables: [String]
    /// The users the program runs as.
    public var userIDs: Set<UInt32>

    public init(program: String, executables: [String], userIDs: Set<UInt32>) {
        self.program = program
        self.executables = executables
        self.userIDs = userIDs
    }

    /// avahi-daemon: /usr/sbin/avahi-daemon, run by root, which drops to the `avahi` user.
    public static func avahiDaemon(avahiUID: UInt32?) -> ProgramIdentity {
        ProgramIdentity(program: "avahi-daemon", executables: ["/usr/sbin/avahi-daemon", "/sbin/avahi-daemon"],
                        userIDs: Set([0] + (avahiUID.map { [$0] } ?? [])))
    }

    /// systemd-resolved (`comm` `systemd-resolve`), run as the `systemd-resolve` user.
    public static func systemdResolved(resolveUID: UInt32?) -> ProgramIdentity {
        ProgramIdentity(program: "systemd-resolved",
                        executables: ["/lib/systemd/systemd-resolved", "/usr/lib/systemd/systemd-resolved"],
                        userIDs: Set([0] + (resolveUID.map { [$0] } ?? [])))
    }

    /// Whether `process` is this program: its real user is one of `userIDs`, and its
    /// executable, when readable, is one of `executables` (also after the binary was replaced
    /// by an upgrade: the kernel then appends " (deleted)").
    public func matches(_ process: ProcessFacts) -> Bool {
        guard let uid = process.realUID, userIDs.contains(uid) else { return false }
        guard let executable = process.executable else { return true }
        let path = executable.hasSuffix(" (deleted)") ? String(executable.dropLast(" (deleted)".count)) : executable
        return executables.contains(path)
    }

    /// The process that is this program among `candidates` (processes named like it): the
    /// owner of its D-Bus name (`busOwner`, which the bus itself vouches for) when that is one
    /// of them and matches, else the first that matches, else nil.
    public func choose(among candidates: [ProcessFacts], busOwner: Int32?) -> ProcessFacts? {
        let genuine = candidates.filter(matches)
        return genuine.first { $0.pid == busOwner } ?? genuine.first
    }
}
