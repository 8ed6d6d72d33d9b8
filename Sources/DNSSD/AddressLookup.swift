import CDNSSD
import Dispatch
import DiscoveryCore
import TransportCore

extension ResolvedService {
    /// The addresses to connect to, from A and AAAA queries (`DNSServiceQueryRecord`) on the
    /// interface the service was resolved on; link-local IPv6 addresses carry that interface
    /// as their scope.
    ///
    /// Both queries run at once. Like RFC 8305 §3, the lookup returns when both have
    /// answered, or `resolutionDelay` after the first answer, so a host without IPv4 (or
    /// IPv6) does not cost a full timeout. IPv6 addresses come first.
    /// - Throws: `DNSSDError` (`.noSuchName` when no address arrived within `timeout`), or
    ///   `CancellationError`.
    public func lookUpAddresses(timeout: Duration = .seconds(5), resolutionDelay: Duration = .milliseconds(50)) async throws -> [SocketEndpoint] {
        let service = self
        let operation = "looking up the addresses of \(hostTarget)"
        return try await OneShot<[SocketEndpoint]>.run(timeout: timeout, onTimeout: {
            DNSSDError(.noSuchName, "\(service.hostTarget) (host of '\(service.instance.name)') did not answer an address query within \(timeout.secondsText); the host may have left the network")
        }) { oneShot in
            let context = AddressContext(service: service, resolutionDelay: resolutionDelay, oneShot: oneShot)
            for recordType in [UInt16(kDNSServiceType_AAAA), UInt16(kDNSServiceType_A)] {
                oneShot.own(try ServiceRef(
                    queue: dnssdQueue, context: context, operation: operation,
                    onProcessError: { error in dnssdQueue.async { oneShot.finish(.failure(error)) } }
                ) { ref, contextPointer in
                    DNSServiceQueryRecord(ref, 0, service.interface.index, service.hostTarget, recordType, UInt16(kDNSServiceClass_IN), { _, flags, interfaceIndex, code, _, type, _, length, data, _, context in
                        let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                        Unmanaged<AddressContext>.fromOpaque(context!).takeUnretainedValue().reply(
                            code: code, isAdd: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
                            interfaceIndex: interfaceIndex, type: type, rdata: bytes)
                    }, contextPointer)
                })
            }
        }
    }
}

/// The C callbacks' context for one address lookup. Runs on `dnssdQueue`.
private final class AddressContext: @unchecked Sendable {
    let service: ResolvedService
    let resolutionDelay: Duration
    let oneShot: OneShot<[SocketEndpoint]>
    private var endpoints: [SocketEndpoint] = []
    private var answeredTypes: Set<UInt16> = []

    init(service: ResolvedService, resolutionDelay: Duration, oneShot: OneShot<[SocketEndpoint]>) {
        self.service = service
        self.resolutionDelay = resolutionDelay
        self.oneShot = oneShot
    }

    func reply(code: DNSServiceErrorType, isAdd: Bool, interfaceIndex: UInt32, type: UInt16, rdata: [UInt8]) {
        assertOnDNSSDQueue()
        guard !oneShot.isFinished else { return }
        guard code == kDNSServiceErr_NoError else {
            answeredTypes.insert(type)
            if answeredTypes.count == 2 { finish() }
            return
        }
        guard isAdd, let address = IPAddress(bytes: rdata) else { return }
        let scope = address.family == .ipv6 && address.isLinkLocal ? networkInterface(interfaceIndex) : nil
        let endpoint = SocketEndpoint(address: address, port: service.port, scopeID: scope?.index ?? 0, scopeName: scope?.name)
        if !endpoints.contains(endpoint) { endpoints.append(endpoint) }
        let firstAnswer = answeredTypes.isEmpty
        answeredTypes.insert(type)
        if answeredTypes.count == 2 {
            finish()
        } else if firstAnswer {
            dnssdQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(resolutionDelay.nanoseconds))) { [self] in finish() }
        }
    }

    private func finish() {
        guard !endpoints.isEmpty else { return }
        oneShot.finish(.success(endpoints.filter { $0.address.family == .ipv6 } + endpoints.filter { $0.address.family == .ipv4 }))
    }
}
