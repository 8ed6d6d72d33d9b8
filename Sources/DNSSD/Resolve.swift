import CDNSSD
import DiscoveryCore

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
    /// Resolves this instance to host, port and TXT (`DNSServiceResolve`).
    ///
    /// A known name is resolved directly; there is no need to browse first.
    /// - Parameters:
    ///   - interfaceIndex: resolve on this interface only, or 0 for any.
    ///   - timeout: how long to wait for an answer.
    /// - Throws: `DNSSDError` (`.noSuchName` when nothing answered within `timeout`, or
    ///   within the daemon's own 5 s limit when `timeout` is longer, `.daemonUnreachable`/
    ///   `.busUnreachable` without a daemon), or `CancellationError`.
    public func resolve(interfaceIndex: UInt32 = 0, timeout: Duration = .seconds(5)) async throws -> ResolvedService {
        let instance = self
        let operation = "resolving '\(name)' of type \(type.baseType) in \(domain)"
        return try await OneShot<ResolvedService>.run(timeout: timeout, onTimeout: {
            DNSSDError(.noSuchName, "no service named '\(instance.name)' of type \(instance.type.baseType) answered in \(instance.domain) within \(timeout.secondsText)")
        }) { oneShot in
            let context = ResolveContext(instance: instance, operation: operation, oneShot: oneShot)
            oneShot.own(try ServiceRef(
                queue: dnssdQueue, context: context, operation: operation,
                onProcessError: { error in dnssdQueue.async { oneShot.finish(.failure(error)) } }
            ) { ref, contextPointer in
                DNSServiceResolve(ref, 0, interfaceIndex, instance.name, instance.type.baseType, instance.domain.name, { _, _, interfaceIndex, code, _, hostTarget, port, txtLength, txt, context in
                    Unmanaged<ResolveContext>.fromOpaque(context!).takeUnretainedValue().reply(
                        code: code, interfaceIndex: interfaceIndex, hostTarget: hostTarget, port: port,
                        txt: txt.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(txtLength))) } ?? [])
                }, contextPointer)
            })
        }
    }
}

/// The C callback's context for one resolve. Runs on `dnssdQueue`.
private final class ResolveContext: @unchecked Sendable {
    let instance: ServiceInstance
    let operation: String
    let oneShot: OneShot<ResolvedService>
    /// When the resolve was started: a failure 5 s or more later is the daemon's own timeout.
    private let started = ContinuousClock.now

    init(instance: ServiceInstance, operation: String, oneShot: OneShot<ResolvedService>) {
        self.instance = instance
        self.operation = operation
        self.oneShot = oneShot
    }

    func reply(code: DNSServiceErrorType, interfaceIndex: UInt32, hostTarget: UnsafePointer<CChar>?, port: UInt16, txt: [UInt8]) {
        assertOnDNSSDQueue()
        guard code == kDNSServiceErr_NoError, let hostTarget else {
            oneShot.finish(.failure(DNSSDError.reported(code, while: operation, lookupElapsed: .now - started)))
            return
        }
        oneShot.finish(.success(ResolvedService(
            instance: instance, hostTarget: String(cString: hostTarget), port: UInt16(bigEndian: port),
            interface: networkInterface(interfaceIndex), txtBytes: txt)))
    }
}
