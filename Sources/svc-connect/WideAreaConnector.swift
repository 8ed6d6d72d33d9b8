import CommandLineSupport
import DNSSD
import Dispatch
import DiscoveryCore
import Messaging
import TransportCore
import TransportPOSIX
import UnicastDNSSD
import WideAreaCommandLine

/// How svc-connect reaches a room registered in a unicast zone (`--domain ZONE`): the
/// instance's SRV, TXT and addresses come straight from the zone's DNS server, then the
/// addresses are raced over TCP as for a room found over mDNS.
enum WideAreaConnector {
    /// The connector for `RoomClient`, or a `ToolFailure` when the zone cannot be used at all.
    static func make(_ options: ConnectOptions, loop: EventLoop) throws -> RoomClient.Connector {
        let wideArea = try WideAreaZone(type: options.type, domain: options.domain, dnsServer: options.dnsServer)
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        return { clientOptions, timeout in
            let deadline = ContinuousClock.now + timeout
            let name = clientOptions.instance.name
            // The zone's answers count against --timeout, however slowly its server answers.
            let found = try await withDeadline(deadline, zone: zone) { () async throws(UnicastDNSSDError) -> ResolvedInstance? in
                try await directory.resolve(name, type: type, in: zone)
            }
            guard let found else {
                let seen = (try? await withDeadline(deadline, zone: zone) { () async throws(UnicastDNSSDError) -> [String] in
                    try await directory.browse(type, in: zone).names
                }) ?? []
                let names = seen.isEmpty ? "no \(options.type.baseType) services are registered in \(zone)"
                    : "registered in \(zone): " + seen.prefix(10).map(TerminalSafe.quoted).joined(separator: ", ") + (seen.count > 10 ? ", ..." : "")
                throw ToolFailure(.noHost, "no service named \(TerminalSafe.quoted(name)) in \(zone); \(names)")
            }
            let resolved = ResolvedService(instance: clientOptions.instance, hostTarget: found.host.description, port: found.port,
                                           interface: NetworkInterface(index: 0, name: "-"),
                                           txtBytes: found.txt.flatMap { [UInt8(truncatingIfNeeded: $0.count)] + $0 })
            let wrap = try clientOptions.securing?(resolved)
            guard found.port != 0 else { throw TransportError("resolve", message: "the service's record gives port 0, where nothing can listen") }
            let endpoints = found.addresses.compactMap { address -> SocketEndpoint? in
                let bytes: [UInt8] = switch address { case .v4(let bytes), .v6(let bytes): bytes }
                guard let address = TransportCore.IPAddress(bytes: bytes), address.unsuitableForAnnouncedService == nil else { return nil }
                return SocketEndpoint(address: address, port: found.port)
            }
            guard !endpoints.isEmpty else {
                throw TransportError("resolve", message: "\(found.host) has no address a service can have in \(zone)")
            }
            let (socket, winner) = try await TCPConnector.connect(to: endpoints, timeout: max(.milliseconds(1), deadline - .now), on: loop)
            let connection = Connection(socket: socket, peer: winner, loop: loop)
            // A connection never started is not on the loop yet: dropped when wrapping fails, it
            // closes its socket.
            return RoomClient.Connected(stream: try wrap?(connection, loop) ?? connection, endpoint: winner, candidates: endpoints)
        }
    }

    /// What `work` returns, or a `ToolFailure` (temporary failure) once `deadline` passes:
    /// `work` is then cancelled, which ends its DNS exchange at once.
    static func withDeadline<T: Sendable>(_ deadline: ContinuousClock.Instant, zone: DNSName,
                                          _ work: @escaping @Sendable () async throws(UnicastDNSSDError) -> T) async throws -> T {
        let outcome = await withTaskGroup(of: DeadlineOutcome<T>.self) { group in
            group.addTask {
                do throws(UnicastDNSSDError) { return .done(try await work()) } catch { return .failed(error) }
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return .late
            }
            let first = await group.next() ?? .late
            group.cancelAll()
            return first
        }
        switch outcome {
        case .done(let value): return value
        case .failed(let error) where error.code == .cancelled: throw CancellationError()
        case .failed(let error): throw ToolFailure(error)
        case .late: throw ToolFailure(.temporaryFailure, "the DNS server of \(zone) did not answer within the --timeout; check --dns-server and that the server runs and is reachable")
        }
    }
}

/// How `WideAreaConnector.withDeadline`'s race ended.
private enum DeadlineOutcome<T: Sendable>: Sendable { case done(T), failed(UnicastDNSSDError), late }
