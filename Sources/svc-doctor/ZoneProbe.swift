import HostDiagnosis
import UnicastDNSSD
import WideAreaCommandLine

/// Gathers `ZoneFacts` for the wide-area checks: asks the zone's server for its SOA, sends an
/// update signed with the key whose only prerequisite makes it change nothing, and lists the
/// service type's instances.
enum ZoneProbe {
    /// The most zones the network recommends that are checked (each costs a few queries).
    static let maximumRecommendedZones = 4
    /// Seconds one exchange may take (the server check tells a timeout from the rest).
    static let timeout = 3

    /// The zones to check: `--domain` when given (with `--dns-server`, else resolv.conf's
    /// server), else the browse and legacy browse domains the network recommends (none when
    /// its DNS server recommends nothing or does not answer: then there is nothing to check).
    static func facts(_ options: DoctorOptions) async -> [ZoneFacts] {
        let type = options.type.baseType
        if let zone = options.zone {
            let server: IPAddress
            let source: String
            if let given = options.dnsServer {
                (server, source) = (given, "--dns-server")
            } else {
                do throws(UnicastDNSSDError) {
                    (server, source) = (try ResolvConf.firstServer(), "/etc/resolv.conf")
                } catch {
                    return [ZoneFacts(zone: zone.description, server: "none", serverSource: "/etc/resolv.conf", type: type, serverAnswer: .notConfigured(error.description))]
                }
            }
            return [await facts(zone: zone, server: server, source: source, recommendedBy: nil, type: type, keyPath: options.tsigKeyPath)]
        }
        guard let found = try? await NetworkDomains.discover([.browse, .legacyBrowse], server: options.dnsServer, timeout: 1) else { return [] }
        var zones: [(DNSName, String)] = []
        for domain in found.found.domains where !domain.domain.isLinkLocal && !zones.contains(where: { $0.0.sameName(as: domain.domain) }) {
            guard zones.count < maximumRecommendedZones else { break }
            zones.append((domain.domain, domain.queries.first?.description ?? domain.kind.name))
        }
        let source = options.dnsServer == nil ? "/etc/resolv.conf" : "--dns-server"
        var all: [ZoneFacts] = []
        for (zone, query) in zones {
            all.append(await facts(zone: zone, server: found.server, source: source, recommendedBy: query, type: type, keyPath: nil))
        }
        return all
    }

    static func facts(zone: DNSName, server: IPAddress, source: String, recommendedBy: String?, type: String, keyPath: String?) async -> ZoneFacts {
        var facts = ZoneFacts(zone: zone.description, server: server.description, serverSource: source, recommendedBy: recommendedBy,
                              type: type, serverAnswer: .answered, keyPath: keyPath)
        let directory = UnicastServiceDirectory(server: LDNSServer(address: server, key: nil, timeout: timeout))
        do throws(UnicastDNSSDError) {
            if let serial = try await directory.serial(of: zone) {
                facts.zoneAnswer = .served(serial: serial)
            } else {
                facts.zoneAnswer = .noSOA
            }
        } catch {
            switch error.code {
            case .noSuchZone, .refused: facts.zoneAnswer = .notServed(error.detail ?? error.message)
            case .connectionRefused: facts.serverAnswer = .connectionRefused(error.description)
            case .unreachable: facts.serverAnswer = .unreachable(error.description)
            case .timeout: facts.serverAnswer = .timeout(error.description)
            default: facts.serverAnswer = .failed(error.description)
            }
            return facts
        }
        guard case .served = facts.zoneAnswer else { return facts }
        if let keyPath { facts.key = await keyState(path: keyPath, zone: zone, server: server) }
        do throws(UnicastDNSSDError) {
            let serviceType = try UnicastDNSSD.ServiceType(type)
            let names = try await directory.browse(serviceType, in: zone).names
            facts.records = .listed(count: names.count, names: Array(names.prefix(5)))
        } catch {
            facts.records = .failed(error.description)
        }
        return facts
    }

    /// Loads the key (refused when others may read it) and sends an update signed with it
    /// whose only prerequisite is that a name nobody uses is not in use, and which changes
    /// nothing: the server checks the signature, and the zone stays as it was (its serial
    /// too). Either outcome of the prerequisite means the signature was accepted.
    static func keyState(path: String, zone: DNSName, server: IPAddress) async -> ZoneFacts.KeyState {
        let key: TSIGKey
        do throws(UnicastDNSSDError) {
            key = try TSIGKey.load(path: path)
        } catch {
            return .unusable(error.description)
        }
        let probe: DNSName
        do throws(UnicastDNSSDError) {
            probe = try zone.prepending(Array("_svc-doctor-probe".utf8))
        } catch {
            return .failed(error.description)
        }
        let update = DNSUpdate(zone: zone, prerequisites: [.nameNotInUse(probe)], changes: [])
        do throws(UnicastDNSSDError) {
            _ = try await LDNSServer(address: server, key: key, timeout: timeout).update(update)
            return .accepted(key.name.description)
        } catch {
            switch error.code {
            case .badKey: return .badSignature(error.description)
            case .refused: return .refused(error.description)
            default: return .failed(error.description)
            }
        }
    }
}
