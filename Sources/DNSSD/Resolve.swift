import CAvahiClient
import DiscoveryCore
import Glibc
import SafeText

/// Where a service instance lives: its host, port, TXT record and the interface it was
/// resolved on.
public struct ResolvedService: Sendable, Hashable {
    public let instance: ServiceInstance
    /// The host's DNS name, e.g. `printer.local.`; look up its addresses with `lookUpAddresses`.
    public let hostTarget: String
    public let port: UInt16
    public let interface: NetworkInterface
    /// The TXT record as received.
    public let txtBytes: [UInt8]
    /// The TXT record decoded per RFC 6763 §6.4, or nil when it is malformed.
    public var txt: TXTRecord? { try? TXTRecord(decoding: txtBytes) }

    /// A service resolved some other way (in a unicast zone, straight from its DNS server).
    public init(instance: ServiceInstance, hostTarget: String, port: UInt16, interface: NetworkInterface, txtBytes: [UInt8]) {
        self.instance = instance
        self.hostTarget = hostTarget
        self.port = port
        self.interface = interface
        self.txtBytes = txtBytes
    }
}

extension ServiceInstance {
    /// Resolves this instance to host, port and TXT (a service resolver of avahi-daemon's,
    /// through its client library: `DaemonClient`).
    ///
    /// A known name is resolved directly; there is no need to browse first.
    /// - Parameters:
    ///   - interfaceIndex: resolve on this interface only, or 0 for any.
    ///   - timeout: how long to wait for an answer.
    /// - Throws: `DNSSDError` (`.noSuchName` when nothing answered within `timeout`, or
    ///   within the daemon's own 5 s limit when `timeout` is longer; `.timedOut` when the
    ///   daemon itself did not answer within `timeout`; `.daemonUnreachable`/`.busUnreachable`
    ///   without a daemon or when it stops meanwhile), or `CancellationError`.
    public func resolve(interfaceIndex: UInt32 = 0, timeout: Duration = .seconds(5)) async throws -> ResolvedService {
        let instance = self
        let operation = "resolving \(TerminalSafe.quoted(name)) of type \(type.baseType) in \(domain)"
        return try await OneShot<ResolvedService>.run(timeout: timeout, onTimeout: { daemonTookIt in
            guard daemonTookIt else { return DNSSDError.notAnswering(while: operation, within: timeout) }
            return DNSSDError(.noSuchName, "no service named \(TerminalSafe.quoted(instance.name)) of type \(instance.type.baseType) answered in \(instance.domain) within \(timeout.secondsText)")
        }) { oneShot in
            guard let interface = AvahiIfIndex(lookingUpOn: interfaceIndex) else {
                throw DNSSDError(.badParameter, "interface index \(interfaceIndex) is not one avahi-daemon takes, so \(operation) failed")
            }
            let context = ResolveContext(instance: instance, operation: operation, oneShot: oneShot)
            let replies = ResolverReplies { report in dnssdQueue.async { context.reply(report) } }
            let (name, type, domain) = (instance.name, instance.type.baseType, instance.domain.name)
            oneShot.own(DaemonClient.start(context: replies, failed: { failure in
                dnssdQueue.async { context.reply(.failed(failure)) }
            }, create: { client, userdata in
                // Host, port and TXT only: the addresses come from `lookUpAddresses` (waiting for
                // one here made a service whose host has none fail as if nothing answered).
                avahi_service_resolver_new(client, interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), name, type, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                           AVAHI_LOOKUP_NO_ADDRESS, { resolver, interface, _, event, _, _, _, hostName, _, port, txt, _, userdata in
                    guard let userdata else { return }
                    let report = ResolverReport(event: event, hostName: hostName, port: port, txt: txt, interface: interface) {
                        resolver.map { avahi_client_errno(avahi_service_resolver_get_client($0)) } ?? Int32(AVAHI_ERR_FAILURE)
                    }
                    Unmanaged<ResolverReplies>.fromOpaque(userdata).takeUnretainedValue().report(report)
                }, userdata)
            }, free: { avahi_service_resolver_free($0) }))
        }
    }
}

/// One service resolver callback's values, copied out on Avahi's poll thread.
enum ResolverReport: Sendable, Hashable {
    case found(hostTarget: String, port: UInt16, interfaceIndex: UInt32, txt: [UInt8])
    case failed(DaemonFailure)
    /// The daemon's answer cannot be used as it is (see `init`).
    case unusable(String)
}

extension ResolverReport {
    /// The longest TXT record taken: what a DNS record's RDATA and dns_sd's `txtLen` hold.
    static let maximumTXTBytes = 65_535

    /// Copies what a resolver callback was given. The values come from the network (any host
    /// answers mDNS) by way of the daemon: a host name that is not terminated within
    /// `AVAHI_DOMAIN_NAME_MAX` bytes, an interface index that is not one, or a TXT record
    /// longer than `maximumTXTBytes` is reported `.unusable`, not guessed at.
    /// - Parameter clientError: the client's error, read only for `AVAHI_RESOLVER_FAILURE`.
    init(event: AvahiResolverEvent, hostName: UnsafePointer<CChar>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?,
         interface: AvahiIfIndex, clientError: () -> Int32) {
        guard event == AVAHI_RESOLVER_FOUND else {
            self = .failed(DaemonFailure(stage: .running, code: clientError(), bus: nil))
            return
        }
        guard let index = UInt32(exactly: interface), index != 0 else {
            self = .unusable("interface index \(interface)")
            return
        }
        guard let hostName else {
            self = .unusable("no host name")
            return
        }
        let length = strnlen(hostName, Int(AVAHI_DOMAIN_NAME_MAX))
        guard length < Int(AVAHI_DOMAIN_NAME_MAX) else {
            self = .unusable("a host name longer than \(AVAHI_DOMAIN_NAME_MAX) bytes")
            return
        }
        guard let bytes = txtWireBytes(txt, limit: Self.maximumTXTBytes) else {
            self = .unusable("a TXT record longer than \(Self.maximumTXTBytes) bytes")
            return
        }
        let host = String(decoding: UnsafeRawBufferPointer(start: hostName, count: length), as: UTF8.self)
        self = .found(hostTarget: withTrailingDot(host), port: port, interfaceIndex: index, txt: bytes)
    }
}

/// A host name as Avahi's dns_sd layer gave it (its `add_trailing_dot`): with a dot at the
/// end, unless it is empty or ends with one already.
func withTrailingDot(_ name: String) -> String {
    name.isEmpty || name.hasSuffix(".") ? name : name + "."
}

/// A TXT record's wire form from the string list a resolver callback gets: the items in the
/// order the record has them, each behind its length byte; empty items left out, longer ones
/// cut to 255 bytes; an empty list is one empty string (a zero byte, RFC 6763 §6.1). Nil when
/// the record would be longer than `limit`.
///
/// avahi-daemon keeps a record's items last first and hands them over so, and
/// `avahi_string_list_serialize` writes a list's items in the order they were added: given the
/// list as it comes, it gives the items last first (as Avahi's dns_sd layer and avahi-browse
/// show them; a listener on the virtual LAN saw avahi-publish's first=1 second=2 third=3 go out
/// in that order and come back third, second, first). So the list is reversed around it (and
/// back: it is Avahi's), which RFC 6763 §6.4's "the first occurrence of a key wins" needs.
func txtWireBytes(_ list: UnsafeMutablePointer<AvahiStringList>?, limit: Int) -> [UInt8]? {
    let reversed = avahi_string_list_reverse(list)
    defer { _ = avahi_string_list_reverse(reversed) }
    let length = avahi_string_list_serialize(reversed, nil, 0)
    guard length <= limit else { return nil }
    return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
        count = buffer.baseAddress.map { avahi_string_list_serialize(reversed, $0, length) } ?? 0
    }
}

extension AvahiIfIndex {
    /// The interface to look up on, as dns_sd numbers it (0 for every interface); nil for an
    /// index Avahi cannot take.
    init?(lookingUpOn index: UInt32) {
        if index == 0 {
            self = AvahiIfIndex(AVAHI_IF_UNSPEC)
        } else {
            guard let value = AvahiIfIndex(exactly: index) else { return nil }
            self = value
        }
    }
}

/// The C callback's context: hands each report on. Runs on Avahi's poll thread.
private final class ResolverReplies: Sendable {
    let report: @Sendable (ResolverReport) -> Void
    init(_ report: @escaping @Sendable (ResolverReport) -> Void) { self.report = report }
}

/// One resolve's state. Bound to `dnssdQueue`.
private final class ResolveContext: @unchecked Sendable {
    let instance: ServiceInstance
    let operation: String
    let oneShot: OneShot<ResolvedService>

    init(instance: ServiceInstance, operation: String, oneShot: OneShot<ResolvedService>) {
        self.instance = instance
        self.operation = operation
        self.oneShot = oneShot
    }

    func reply(_ report: ResolverReport) {
        assertOnDNSSDQueue()
        switch report {
        case .found(let hostTarget, let port, let interfaceIndex, let txt):
            oneShot.finish(.success(ResolvedService(
                instance: instance, hostTarget: hostTarget, port: port,
                interface: networkInterface(interfaceIndex), txtBytes: txt)))
        case .failed(let failure):
            oneShot.finish(.failure(DNSSDError.daemon(failure, while: operation)))
        case .unusable(let what):
            oneShot.finish(.failure(DNSSDError(.other, "avahi-daemon answered \(operation) with \(what), which no DNS record holds; the answer was not used")))
        }
    }
}
