import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD

/// A service type in a unicast zone, read from the zone's DNS server: what `svc-browse
/// --domain ZONE` and `svc-connect --domain ZONE` both start from.
public struct WideAreaZone: Sendable {
    /// The directory on the zone's server (queries unsigned).
    public let directory: UnicastServiceDirectory<LDNSServer>
    public let type: UnicastDNSSD.ServiceType
    public let zone: DNSName

    /// The zone `domain` and the type `type` on `dnsServer`, or the first `nameserver` of
    /// /etc/resolv.conf when it is nil.
    /// - Throws: `ToolFailure` (78 for a name that is not a DNS name, 69 when resolv.conf
    ///   names no server).
    public init(type: DiscoveryCore.ServiceType, domain: ServiceDomain, dnsServer: UnicastDNSSD.IPAddress?) throws(ToolFailure) {
        do throws(UnicastDNSSDError) {
            let server = if let dnsServer { dnsServer } else { try ResolvConf.firstServer() }
            directory = UnicastServiceDirectory(server: LDNSServer(address: server, key: nil))
            self.type = try UnicastDNSSD.ServiceType(type.baseType)
            zone = try DNSName(dotted: domain.name)
        } catch {
            throw ToolFailure(error)
        }
    }

    /// The same type in another zone on the same server (a browse domain the network recommends).
    public init(directory: UnicastServiceDirectory<LDNSServer>, type: UnicastDNSSD.ServiceType, zone: DNSName) {
        self.directory = directory
        self.type = type
        self.zone = zone
    }
}
