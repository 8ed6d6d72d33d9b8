import HostDiagnosis

/// Gathers `ResponderFacts`: who holds UDP 5353 in this network namespace, and
/// systemd-resolved's `MulticastDNS=`.
enum ResponderProbe {
    static func facts(daemonPID: Int32?) -> ResponderFacts {
        var entries: [UDPSocketEntry] = []
        var errors: [String] = []
        for table in ["/proc/net/udp", "/proc/net/udp6"] {
            do {
                entries += UDPSocketEntry.sockets(boundTo: 5353, in: try SystemFiles.read(table, limit: 8 << 20))
            } catch {
                errors.append(error.description)
            }
        }
        let owners = Processes.socketOwners(Set(entries.map(\.inode)))
        // Only the installed systemd-resolved counts as it: a user's program may take its name.
        let resolved = ProgramIdentity.systemdResolved(resolveUID: Processes.userID(of: "systemd-resolve"))
        let sockets = entries.map { entry in
            ResponderFacts.BoundSocket(address: entry.address, uid: entry.uid, owners: (owners[entry.inode] ?? []).map { pid in
                let name = Processes.name(pid) ?? "?"
                return ResponderFacts.Owner(pid: pid, name: name, commandLine: String(Processes.commandLine(pid).joined(separator: " ").prefix(200)),
                                            isSystemdResolved: name == "systemd-resolve" && resolved.matches(Processes.identityFacts(pid)))
            })
        }
        let resolvedRunning = Processes.named("systemd-resolve").contains { resolved.matches(Processes.identityFacts($0)) }
        var facts = ResponderFacts(sockets: sockets, daemonPID: daemonPID, resolved: resolvedConfig(), resolvedRunning: resolvedRunning)
        facts.readErrors = errors
        facts.daemonUID = daemonPID.flatMap { pid in (try? SystemFiles.read("/proc/\(pid)/status", limit: 8192)).flatMap(ProcessStatus.realUID) }
        return facts
    }

    /// resolved.conf, then its drop-ins in /etc/systemd/resolved.conf.d sorted by name.
    static func resolvedConfig() -> ResolvedConfig {
        let directory = "/etc/systemd/resolved.conf.d"
        let paths = ["/etc/systemd/resolved.conf"]
            + SystemFiles.entries(directory, limit: 1000).filter { $0.hasSuffix(".conf") }.sorted().map { directory + "/" + $0 }
        return ResolvedConfig(files: paths.compactMap { path in (try? SystemFiles.read(path)).map { (path, $0) } })
    }
}
