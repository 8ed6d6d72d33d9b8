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
        let sockets = entries.map { entry in
            ResponderFacts.BoundSocket(address: entry.address, uid: entry.uid, owners: (owners[entry.inode] ?? []).map { pid in
                ResponderFacts.Owner(pid: pid, name: Processes.name(pid) ?? "?", commandLine: String(Processes.commandLine(pid).joined(separator: " ").prefix(200)))
            })
        }
        var facts = ResponderFacts(sockets: sockets, daemonPID: daemonPID, resolved: resolvedConfig(),
                                   resolvedRunning: !Processes.named("systemd-resolve").isEmpty)
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
