import UnicastDNSSD

/// The domains this host's network recommends through DNS (RFC 6763 section 11), asked of
/// one DNS server under the resolv.conf search domains and the reverse-mapping names of the
/// host's subnets.
public enum NetworkDomains {
    /// Asks `server` (the first nameserver of /etc/resolv.conf when nil) for `kinds`.
    /// - Parameter timeout: seconds one exchange may take (all starting points are asked at once).
    /// - Throws: `.unreachable` when no server is given and resolv.conf names none.
    public static func discover(_ kinds: [BrowseDomainKind], server: IPAddress?, timeout: Int = 3) async throws(UnicastDNSSDError) -> (server: IPAddress, startingPoints: [DNSName], found: DomainEnumeration) {
        let address = if let server { server } else { try ResolvConf.firstServer() }
        let points = DomainEnumeration.startingPoints(searchDomains: ResolvConf.searchDomains(), subnets: HostSubnets.current())
        let directory = UnicastServiceDirectory(server: LDNSServer(address: address, key: nil, timeout: timeout))
        return (address, points, await directory.enumerateDomains(kinds, startingPoints: points))
    }
}
