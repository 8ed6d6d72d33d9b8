import HostDiagnosis

/// Gathers `NSSFacts`: /etc/nsswitch.conf's `hosts:` line and the installed libnss_mdns files.
enum NSSProbe {
    static let libraryDirectories = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                                     "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]

    static func facts() -> NSSFacts {
        var hosts: NSSHosts?
        var readError: String?
        do {
            hosts = NSSHosts(parsing: try SystemFiles.read("/etc/nsswitch.conf"))
        } catch {
            readError = error.description
        }
        var libraries: [String] = []
        for directory in libraryDirectories {
            libraries += SystemFiles.entries(directory).filter { $0.hasPrefix("libnss_mdns") }.sorted().map { directory + "/" + $0 }
        }
        return NSSFacts(hosts: hosts, readError: readError, libraries: libraries)
    }
}
