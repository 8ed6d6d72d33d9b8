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

    /// The first DNS server of the file at `path` (default `/etc/resolv.conf`).
    /// - Throws: `.unreachable` when the file cannot be read or names no server, saying how to
    ///   name one.
    public static func firstServer(path: String = "/etc/resolv.conf") throws(UnicastDNSSDError) -> IPAddress {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
        guard let server = nameservers(in: String(decoding: bytes[..<filled], as: UTF8.self)).first else {
            throw UnicastDNSSDError(.unreachable, "\(path) names no DNS server (no 'nameserver' line with an address); give --dns-server")
        }
        return server
    }
}
