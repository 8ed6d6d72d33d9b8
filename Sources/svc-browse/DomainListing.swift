import CommandLineSupport
import UnicastDNSSD
import WideAreaCommandLine

/// `svc-browse --domains`: the domains the network recommends for browsing and registering
/// (RFC 6763 section 11), asked of the DNS server under each resolv.conf search domain and
/// each subnet's reverse-mapping name. One line per domain, then exit.
enum DomainListing {
    static func list(_ options: BrowseOptions) async throws {
        let discovery: (server: UnicastDNSSD.IPAddress, startingPoints: [DNSName], found: DomainEnumeration)
        do throws(UnicastDNSSDError) {
            discovery = try await NetworkDomains.discover(BrowseDomainKind.allCases, server: options.dnsServer)
        } catch {
            throw ToolFailure(error)
        }
        let (_, points, found) = discovery
        if points.isEmpty {
            Console.note("this host has no search domain in /etc/resolv.conf and no subnet but link-local ones: there is nowhere to ask for browse domains")
        }
        for failure in found.failures {
            Console.note("could not ask about \(failure.startingPoint): \(failure.error)")
        }
        // Nothing answered at all: the server is the problem, say so by the exit status.
        if let failure = found.failures.first, found.failures.count == points.count {
            throw ToolFailure(failure.error)
        }
        if found.cut > 0 {
            Console.note("left out \(found.cut) more domains (at most \(DomainEnumeration.maximumDomainsPerAnswer) from one answer, \(DomainEnumeration.maximumDomains) in all)")
        }
        for domain in found.domains {
            let queries = domain.queries.map(\.description)
            if options.json {
                Console.out(JSONValue.object([
                    ("event", .string("domain")), ("time", .string(timestampNow())), ("kind", .string(domain.kind.name)),
                    ("domain", .string(domain.domain.description)), ("queries", .array(queries.map(JSONValue.string))),
                ]).serialized)
            } else {
                Console.out("\(domain.kind.name) \(domain.domain) (" + queries.joined(separator: ", ") + ")")
            }
        }
        if options.json { Console.out(JSONValue.object([("event", .string("complete")), ("time", .string(timestampNow()))]).serialized) }
    }
}
