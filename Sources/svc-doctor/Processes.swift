import Glibc
import HostDiagnosis

/// The processes in /proc, as far as this user may see them.
enum Processes {
    /// Every pid in /proc (at most 100,000).
    static func all() -> [Int32] { SystemFiles.entries("/proc").compactMap { Int32($0) } }

    /// `/proc/PID/comm` without its newline, or nil.
    static func name(_ pid: Int32) -> String? {
        (try? SystemFiles.read("/proc/\(pid)/comm", limit: 64)).map { String($0.prefix { $0 != "\n" }) }
    }

    /// `/proc/PID/cmdline` split at its NULs (at most 4 KiB), or empty.
    static func commandLine(_ pid: Int32) -> [String] {
        guard let text = try? SystemFiles.read("/proc/\(pid)/cmdline", limit: 4096) else { return [] }
        return text.split(separator: "\0").map(String.init)
    }

    /// What `ProgramIdentity` needs of `pid`: its executable (`/proc/PID/exe`, readable for
    /// another user's process only as root) and its real user id.
    static func identityFacts(_ pid: Int32) -> ProgramIdentity.ProcessFacts {
        ProgramIdentity.ProcessFacts(pid: pid, executable: SystemFiles.linkTarget("/proc/\(pid)/exe"),
                                     realUID: (try? SystemFiles.read("/proc/\(pid)/status", limit: 8192)).flatMap(ProcessStatus.realUID))
    }

    /// The user id of the system user `name` (e.g. `avahi`), or nil when there is none.
    static func userID(of name: String) -> UInt32? {
        getpwnam(name).map { $0.pointee.pw_uid }
    }

    /// Whether `pid` is in this process's network namespace. True when that cannot be told
    /// (another user's process without root): then every such process counts.
    static func sharesNetworkNamespace(_ pid: Int32) -> Bool {
        guard let own = SystemFiles.linkTarget("/proc/self/ns/net"),
              let other = SystemFiles.linkTarget("/proc/\(pid)/ns/net") else { return true }
        return own == other
    }

    /// Whether `pid` has exited and waits to be reaped (state Z or X in `/proc/PID/stat`):
    /// where nobody reaps (some container init processes), a stopped daemon stays such a
    /// zombie under its name, with no namespaces left to read.
    static func isDefunct(_ pid: Int32) -> Bool {
        guard let stat = try? SystemFiles.read("/proc/\(pid)/stat", limit: 1024), let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }

    /// The live processes of this network namespace whose name is `name`.
    static func named(_ name: String) -> [Int32] {
        all().filter { self.name($0) == name && !isDefunct($0) && sharesNetworkNamespace($0) }
    }

    /// Which processes hold each of `inodes` as an open socket (`/proc/PID/fd/N` ->
    /// `socket:[inode]`), scanning the file descriptors of every visible process.
    static func socketOwners(_ inodes: Set<UInt64>) -> [UInt64: [Int32]] {
        guard !inodes.isEmpty else { return [:] }
        var owners: [UInt64: [Int32]] = [:]
        for pid in all() {
            for fd in SystemFiles.entries("/proc/\(pid)/fd", limit: 65536) {
                guard let target = SystemFiles.linkTarget("/proc/\(pid)/fd/\(fd)"), target.hasPrefix("socket:["),
                      let inode = UInt64(target.dropFirst("socket:[".count).dropLast()), inodes.contains(inode) else { continue }
                if !(owners[inode]?.contains(pid) ?? false) { owners[inode, default: []].append(pid) }
            }
        }
        return owners
    }
}
