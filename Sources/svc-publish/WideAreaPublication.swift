import CommandLineSupport
import DNSSD
import DiscoveryCore
import Glibc
import Synchronization
import struct TransportCore.PublicKeyFingerprint
import UnicastDNSSD
import WideAreaCommandLine

/// The room's registration in a unicast DNS zone (`--domain ZONE --dns-server ADDR
/// --tsig-key FILE`): registered by signed DNS UPDATE, refreshed while the room runs
/// (registered again if its records were removed), withdrawn when it closes.
final class WideAreaPublication: Sendable {
    /// The records' TTL: short, since BIND keeps records a crashed publisher left.
    static let ttl: UInt32 = 30
    /// How often the records are checked and renewed.
    static let refreshInterval: Duration = .seconds(10)

    private let directory: UnicastServiceDirectory<LDNSServer>
    private let policy: UnicastDNSSD.ConflictPolicy
    /// The instance as registered now (renamed after a conflict); guarded by the mutex.
    private let current: Mutex<UnicastDNSSD.ServiceInstance>

    private init(directory: UnicastServiceDirectory<LDNSServer>, policy: UnicastDNSSD.ConflictPolicy, instance: UnicastDNSSD.ServiceInstance) {
        self.directory = directory
        self.policy = policy
        self.current = Mutex(instance)
    }

    /// The name the room is registered under.
    var name: String { current.withLock { $0.instanceName } }

    /// Registers the room.
    /// - Throws: `ToolFailure`: 78 for a key file or name problem, 69 for an unreachable or
    ///   refusing server, 75 for a timeout, 73 for a conflict under `--conflict fail` (as over mDNS);
    ///   `Interrupted` when the task was cancelled before the registration completed.
    /// - Parameter key: the room's key: its tag makes the host name the room's own.
    static func register(_ settings: PublishOptions.WideArea, name: String, type: DiscoveryCore.ServiceType, domain: ServiceDomain,
                         port: UInt16, txt: TXTRecord, key roomKey: PublicKeyFingerprint, conflict: DNSSD.ConflictPolicy) async throws -> WideAreaPublication {
        let server: LDNSServer
        let first: UnicastDNSSD.ServiceInstance
        do throws(UnicastDNSSDError) {
            let key = try TSIGKey.load(path: settings.keyPath)
            let zone = try DNSName(dotted: domain.name)
            guard let label = HostAddresses.hostLabel(for: roomKey) else {
                throw UnicastDNSSDError(.invalidName, "this host's name is not a DNS label (letters, digits and '-'); set a plain host name")
            }
            let addresses = HostAddresses.routable()
            guard !addresses.isEmpty else {
                throw UnicastDNSSDError(.invalidName, "this host has no address another subnet can reach (only loopback or link-local); connect it to a network first")
            }
            let items = txt.entries.map { Array($0.key.utf8) + ($0.value.map { [UInt8(ascii: "=")] + $0 } ?? []) }
            let instance = try UnicastDNSSD.ServiceInstance(instanceName: name, type: try UnicastDNSSD.ServiceType(type.baseType), zone: zone,
                                               host: try zone.prepending(label), port: port, txt: items, addresses: addresses)
            server = LDNSServer(address: settings.server, key: key, timeout: settings.timeout)
            first = instance
        } catch {
            throw ToolFailure(error)
        }
        let directory = UnicastServiceDirectory(server: server)
        let policy: UnicastDNSSD.ConflictPolicy = conflict == .fail ? .fail : .rename
        // Every name an update goes out for is noted: a cancelled exchange may have been applied.
        let sent = NotingServer<LDNSServer>.Log()
        do throws(UnicastDNSSDError) {
            let registered = try await UnicastServiceDirectory(server: NotingServer(base: server, log: sent))
                .register(first, ttl: ttl, conflict: policy, isOurLeftover: { !isServed(port: $0) })
            return WideAreaPublication(directory: directory, policy: policy, instance: registered)
        } catch where error.code == .cancelled {
            throw Interrupted(tried: sent.all.compactMap { try? first.renamed($0) }, directory: directory)
        } catch {
            throw ToolFailure(error)
        }
    }

    /// Checks and renews the records, following the host's addresses when they changed;
    /// registers them again (perhaps renamed) when they are gone. Returns the new name when it changed. A server that cannot be reached now is
    /// reported by the caller and tried again at the next refresh.
    func refresh() async throws(UnicastDNSSDError) -> String? {
        let previous = current.withLock { $0 }
        // The host's addresses may have changed (a new lease, a cable moved): follow them.
        let addresses = HostAddresses.routable()
        let instance = addresses.isEmpty || Set(addresses) == Set(previous.addresses) ? previous : try previous.moved(to: addresses)
        if try await directory.refresh(instance, ttl: Self.ttl) {
            current.withLock { $0 = instance }
            return nil
        }
        let registered = try await directory.register(instance, ttl: Self.ttl, conflict: policy, isOurLeftover: { !isServed(port: $0) })
        current.withLock { $0 = registered }
        return registered.instanceName
    }

    /// Removes the room's records (best effort: a failure is reported, not thrown).
    func withdraw() async {
        let instance = current.withLock { $0 }
        do {
            try await directory.withdraw(instance)
        } catch {
            Console.note("could not withdraw \(TerminalSafe.quoted(instance.instanceName)) from \(instance.zone): \(error)")
        }
    }

    /// `svc-publish --withdraw`: removes what a crashed publisher of this host left under
    /// `name`, and says what it did.
    /// - Parameter fingerprint: the key of the local key file (nil when there is none): only
    ///   records whose TXT carries it are ours.
    static func withdrawLeftover(_ settings: PublishOptions.WideArea, name: String, type: DiscoveryCore.ServiceType, domain: ServiceDomain,
                                 fingerprint: PublicKeyFingerprint?, output: EventOutput) async throws -> ExitCode {
        let outcome: UnicastServiceDirectory<LDNSServer>.LeftoverOutcome
        let zone: DNSName
        do throws(UnicastDNSSDError) {
            let key = try TSIGKey.load(path: settings.keyPath)
            zone = try DNSName(dotted: domain.name)
            guard let label = fingerprint.map(HostAddresses.hostLabel(for:)) ?? HostAddresses.hostLabel() else {
                throw UnicastDNSSDError(.invalidName, "this host's name is not a DNS label (letters, digits and '-'); set a plain host name")
            }
            let directory = UnicastServiceDirectory(server: LDNSServer(address: settings.server, key: key, timeout: settings.timeout))
            outcome = try await directory.withdrawLeftover(name, type: try UnicastDNSSD.ServiceType(type.baseType), in: zone,
                                                           host: try zone.prepending(label), keyItem: fingerprint.map { Array("key=\($0.full)".utf8) },
                                                           isServed: { isServed(port: $0) })
        } catch {
            throw ToolFailure(error)
        }
        switch outcome {
        case .withdrawn(let port):
            output.emit("withdrawn", text: "withdrew \(TerminalSafe.quoted(name)) \(type.baseType) \(domain) port \(port)", [
                ("name", .string(name)), ("type", .string(type.baseType)), ("domain", .string(domain.name)), ("port", .integer(Int(port))),
            ])
            return .success
        case .nothingThere:
            Console.note("\(TerminalSafe.quoted(name)) is not registered in \(zone): nothing to withdraw")
            return .success
        case .anotherHost(let host):
            throw ToolFailure(.cannotCreate, "\(TerminalSafe.quoted(name)) in \(zone) belongs to another host (\(host)): only a publisher on that host may withdraw it")
        case .anotherKey:
            throw ToolFailure(.cannotCreate, "\(TerminalSafe.quoted(name)) in \(zone) was registered with another key than this user's (its TXT key= differs): "
                              + "it is another room, perhaps on a host of the same name; only its publisher may withdraw it")
        case .stillServed(let port):
            throw ToolFailure(.temporaryFailure, "\(TerminalSafe.quoted(name)) in \(zone) is served on this host (port \(port)): stop that svc-publish instead; it withdraws the name as it exits")
        }
    }
}

/// Whether something on this host accepts TCP connections on `port` (our own room does while
/// it runs): an SRV of ours on a port nobody serves is a crashed publisher's leftover.
func isServed(port: UInt16) -> Bool {
    for family in [AF_INET6, AF_INET] {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { continue }
        defer { close(fd) }
        let result: Int32
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        if result == 0 { return true }
    }
    return false
}
