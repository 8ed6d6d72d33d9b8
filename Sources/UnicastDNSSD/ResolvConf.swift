import Glibc

/// The DNS servers a host is told to use: the `nameserver` lines of resolv.conf(5).
public enum ResolvConf {
    /// The most bytes of the file read.
    public static let maximumFileSize = 64 * 1024
    /// The most servers taken (the resolver's own limit, MAXNS).
    public static let maximumServers = 3

    /// The addresses of the `nameserver` lines of `text`, in order, at most
    /// `maximumServers`; lines that are not an IPv4 or IPv6 address (a zone index such as
    /// `%eth0` included: it names no route across subnets) are skipped.
    public static func nameservers(in text: some StringProtocol) -> [IPAddress] {
        var servers: [IPAddress] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "nameserver", let address = IPAddress(String(fields[1])) else { continue }
            servers.append(address)
            if servers.count == maximumServers { break }
        }
        return servers
    }

    /// The most search domains taken (glibc's resolver takes 6 from older files).
    public static let maximumSearchDomains = 6

    /// The domains of the last `search` or `domain` line of `text` (the resolver uses the
    /// last one), in order, at most `maximumSearchDomains`; names that are not plain DNS
    /// names (a backslash, an empty label, too long) are skipped, and so is the root.
    public static func searchDomains(in text: some StringProtocol) -> [DNSName] {
        var domains: [DNSName] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let keyword = fields.first, keyword == "search" || keyword == "domain" else { continue }
            domains = []
            for field in fields.dropFirst() {
                guard domains.count < maximumSearchDomains, let name = try? DNSName(dotted: String(field)), !name.labels.isEmpty,
                      !domains.contains(where: { $0.sameName(as: name) }) else { continue }
                domains.append(name)
            }
        }
        return domains
    }

    /// The search domains of the file at `path` (default `/etc/resolv.conf`); none when it
    /// cannot be read.
    public static func searchDomains(path: String = "/etc/resolv.conf") -> [DNSName] {
        (try? contents(of: path)).map { searchDomains(in: $0) } ?? []
    }

    /// The first DNS server of the file at `path` (default `/etc/resolv.conf`).
    /// - Throws: `.unreachable` when the file cannot be read or names no server, saying how to
    ///   name one.
    public static func firstServer(path: String = "/etc/resolv.conf") throws(UnicastDNSSDError) -> IPAddress {
        guard let server = nameservers(in: try contents(of: path)).first else {
            throw UnicastDNSSDError(.unreachable, "\(path) names no DNS server (no 'nameserver' line with an address); give --dns-server")
        }
        return server
    }

    /// The first `maximumFileSize` bytes of the file at `path`, as text.
    /// - Throws: `.unreachable` when it cannot be opened, saying how to name a server.
    private static func contents(of path: String) throws(UnicastDNSSDError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw UnicastDNSSDError(.unreachable, "cannot read \(path) to find the DNS server: \(String(cString: strerror(code))) (errno \(code)); give --dns-server")
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maximumFileSize)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}
