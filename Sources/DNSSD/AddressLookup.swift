import CAvahiClient
import Dispatch
import DiscoveryCore
import SafeText
import TransportCore

extension ResolvedService {
    /// The addresses to connect to, from A and AAAA record browsers of avahi-daemon's
    /// (through its client library: `DaemonClient`) on the interface the service was resolved
    /// on; link-local IPv6 addresses carry that interface as their scope.
    ///
    /// Both queries run at once. Like RFC 8305 §3, the lookup returns when both have
    /// answered, or `resolutionDelay` after the first answer, so a host without IPv4 (or
    /// IPv6) does not cost a full timeout. IPv6 addresses come first, at most 8 of each family
    /// (the first answered).
    /// - Throws: `DNSSDError` (`.noSuchName` when no address arrived within `timeout`;
    ///   `.timedOut` when the daemon itself did not answer within it;
    ///   `.daemonUnreachable`/`.busUnreachable` when the daemon cannot be reached or stops
    ///   meanwhile), or `CancellationError`.
    public func lookUpAddresses(timeout: Duration = .seconds(5), resolutionDelay: Duration = .milliseconds(50)) async throws -> [SocketEndpoint] {
        let service = self
        let operation = "looking up the addresses of \(hostTarget)"
        return try await OneShot<[SocketEndpoint]>.run(timeout: timeout, onTimeout: { daemonTookThem in
            guard daemonTookThem else { return DNSSDError.notAnswering(while: operation, within: timeout) }
            return DNSSDError(.noSuchName, "\(service.hostTarget) (host of \(TerminalSafe.quoted(service.instance.name))) did not answer an address query within \(timeout.secondsText); the host may have left the network")
        }) { oneShot in
            guard let interface = AvahiIfIndex(lookingUpOn: service.interface.index) else {
                throw DNSSDError(.badParameter, "interface index \(service.interface.index) is not one avahi-daemon takes, so \(operation) failed")
            }
            let context = AddressContext(service: service, operation: operation, resolutionDelay: resolutionDelay, oneShot: oneShot)
            let hostTarget = service.hostTarget
            for recordType in [UInt16(AVAHI_DNS_TYPE_AAAA), UInt16(AVAHI_DNS_TYPE_A)] {
                let replies = RecordReplies { report in dnssdQueue.async { context.reply(report, type: recordType) } }
                oneShot.own(DaemonClient.start(context: replies, failed: { failure in
                    dnssdQueue.async { context.reply(.failed(failure), type: recordType) }
                }, create: { client, userdata in
                    avahi_record_browser_new(client, interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), hostTarget, UInt16(AVAHI_DNS_CLASS_IN), recordType,
                                             AvahiLookupFlags(0), { browser, interface, _, event, _, _, _, rdata, size, _, userdata in
                        guard let userdata, let report = RecordReport(event: event, interface: interface, rdata: rdata, size: size, clientError: {
                            browser.map { avahi_client_errno(avahi_record_browser_get_client($0)) } ?? Int32(AVAHI_ERR_FAILURE)
                        }) else { return }
                        Unmanaged<RecordReplies>.fromOpaque(userdata).takeUnretainedValue().report(report)
                    }, userdata)
                }, free: { avahi_record_browser_free($0) }))
            }
        }
    }
}

/// One record browser callback's values, copied out on Avahi's poll thread.
enum RecordReport: Sendable, Hashable {
    /// An A or AAAA record arrived on that interface.
    case added(interfaceIndex: UInt32, rdata: [UInt8])
    case failed(DaemonFailure)
}

extension RecordReport {
    /// Copies what a record browser callback was given, or nil for what the lookup does not
    /// use: a removal, the daemon's "cache exhausted" and "all for now", and (the values come
    /// from the network by way of the daemon) data that is no address or an interface index
    /// that is not one.
    /// - Parameter clientError: the client's error, read only for `AVAHI_BROWSER_FAILURE`.
    init?(event: AvahiBrowserEvent, interface: AvahiIfIndex, rdata: UnsafeRawPointer?, size: Int, clientError: () -> Int32) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard size == 4 || size == 16, let rdata, let index = UInt32(exactly: interface), index != 0 else { return nil }
            self = .added(interfaceIndex: index, rdata: Array(UnsafeRawBufferPointer(start: rdata, count: size)))
        case AVAHI_BROWSER_FAILURE:
            self = .failed(DaemonFailure(stage: .running, code: clientError(), bus: nil))
        default:
            return nil
        }
    }
}

/// The C callback's context: hands each report on. Runs on Avahi's poll thread.
private final class RecordReplies: Sendable {
    let report: @Sendable (RecordReport) -> Void
    init(_ report: @escaping @Sendable (RecordReport) -> Void) { self.report = report }
}

/// One address lookup's state. Bound to `dnssdQueue`.
private final class AddressContext: @unchecked Sendable {
    let service: ResolvedService
    let operation: String
    let resolutionDelay: Duration
    let oneShot: OneShot<[SocketEndpoint]>
    private var endpoints: [SocketEndpoint] = []
    /// Addresses kept of each family: any host can answer with thousands (a review's 1,500 A and
    /// 1,500 AAAA records made svc-connect try them all and print an 84 KB error line).
    static let addressesPerFamily = 8
    private var answeredTypes: Set<UInt16> = []

    init(service: ResolvedService, operation: String, resolutionDelay: Duration, oneShot: OneShot<[SocketEndpoint]>) {
        self.service = service
        self.operation = operation
        self.resolutionDelay = resolutionDelay
        self.oneShot = oneShot
    }

    /// A failed query counts as answered; when both have failed without an address, the
    /// lookup fails with the later reason.
    func reply(_ report: RecordReport, type: UInt16) {
        assertOnDNSSDQueue()
        guard !oneShot.isFinished else { return }
        switch report {
        case .failed(let failure):
            answeredTypes.insert(type)
            guard answeredTypes.count == 2 else { return }
            if endpoints.isEmpty {
                oneShot.finish(.failure(DNSSDError.daemon(failure, while: operation)))
            } else {
                finish()
            }
        case .added(let interfaceIndex, let rdata):
            guard let address = IPAddress(bytes: rdata) else { return }
            let scope = address.family == .ipv6 && address.isLinkLocal ? networkInterface(interfaceIndex) : nil
            let endpoint = SocketEndpoint(address: address, port: service.port, scopeID: scope?.index ?? 0, scopeName: scope?.name)
            if !endpoints.contains(endpoint), endpoints.count(where: { $0.address.family == address.family }) < Self.addressesPerFamily {
                endpoints.append(endpoint)
            }
            let firstAnswer = answeredTypes.isEmpty
            answeredTypes.insert(type)
            if answeredTypes.count == 2 {
                finish()
            } else if firstAnswer {
                dnssdQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(resolutionDelay.nanoseconds))) { [self] in finish() }
            }
        }
    }

    private func finish() {
        guard !endpoints.isEmpty else { return }
        oneShot.finish(.success(endpoints.filter { $0.address.family == .ipv6 } + endpoints.filter { $0.address.family == .ipv4 }))
    }
}
