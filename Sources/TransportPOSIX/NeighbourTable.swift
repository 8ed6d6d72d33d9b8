import Glibc
import TransportCore

/// The kernel's neighbour table of this network namespace, asked over netlink one entry at a
/// time (`RTM_GETNEIGH` with `NDA_DST` and the interface: no dump).
public enum NeighbourTable {
    /// Bytes read for one answer at most (an entry is under 100 bytes; an error echoes the
    /// request).
    static let maximumAnswerBytes = 1024
    /// How long to wait for the kernel's answer (it answers while handling the request, so
    /// this only bounds a misbehaving kernel).
    static let answerTimeout = timeval(tv_sec: 0, tv_usec: 50_000)

    /// A link-local peer's entry as read at accept, and where to read it again.
    public struct Accepted: Sendable {
        let address: IPAddress
        let interfaceIndex: UInt32
        let acceptedAt: ContinuousClock.Instant
        let sighting: NeighbourSighting?
    }

    /// Reads a link-local peer's entry at accept (`NeighbourAttribution`).
    /// - Parameters:
    ///   - peer: a peer that connected to us.
    ///   - socket: its connection, whose local address gives an IPv4 peer's interface.
    /// - Returns: nil when the peer is not link-local or its interface is not known (then its
    ///   guesses count by exact address); the failure when the table cannot be read.
    /// - Important: one blocking netlink request and answer on the calling thread (tens of
    ///   microseconds; at most `answerTimeout`), plus `getifaddrs` for an IPv4 peer.
    public static func atAccept(peer: SocketEndpoint, socket: Socket) -> Result<Accepted, TransportError>? {
        let v4 = peer.address.unmappedIPv4 ?? (peer.address.family == .ipv4 ? peer.address : nil)
        guard v4?.isLinkLocal ?? peer.address.isLinkLocal else { return nil }
        let acceptedAt = ContinuousClock.now
        guard let interfaceIndex = v4 == nil ? (peer.scopeID == 0 ? nil : peer.scopeID) : LocalInterface.index(of: socket) else { return nil }
        let address = v4 ?? peer.address
        do {
            let entry = try entry(for: address, interfaceIndex: interfaceIndex)
            let sighting = NeighbourSighting(entry: entry, readAt: ContinuousClock.now, ticksPerSecond: ticksPerSecond)
            return .success(Accepted(address: address, interfaceIndex: interfaceIndex, acceptedAt: acceptedAt, sighting: sighting))
        } catch {
            return .failure(error)
        }
    }

    /// Which host the peer read at accept is charged to now, at its CODE_START: reads the
    /// entry again (`NeighbourAttribution.decide`).
    public static func attribution(of accepted: Accepted) throws(TransportError) -> NeighbourAttribution {
        let entry = try entry(for: accepted.address, interfaceIndex: accepted.interfaceIndex)
        let now = NeighbourSighting(entry: entry, readAt: ContinuousClock.now, ticksPerSecond: ticksPerSecond)
        return NeighbourAttribution.decide(acceptedAt: accepted.acceptedAt, atAccept: accepted.sighting, atCodeStart: now,
                                           ticksPerSecond: ticksPerSecond)
    }

    static var ticksPerSecond: Int { sysconf(Int32(_SC_CLK_TCK)) }

    /// The kernel's entry for `address` on interface `interfaceIndex`, or nil when it has none.
    static func entry(for address: IPAddress, interfaceIndex: UInt32) throws(TransportError) -> NeighbourQuery.Entry? {
        let fd = try syscall("socket(AF_NETLINK)") { socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { close(fd) }
        var timeout = answerTimeout
        _ = try syscall("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
        let request = NeighbourQuery.request(address: address, interfaceIndex: interfaceIndex, sequence: 1)
        // With no address given, a netlink socket sends to the kernel (port 0).
        _ = try syscall("send(netlink)") { request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
        var buffer = [UInt8](repeating: 0, count: maximumAnswerBytes)
        let count = try syscall("recv(netlink)") { buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
        switch NeighbourQuery.decode(Array(buffer[..<min(count, buffer.count)])) {
        case .entry(let entry)?:
            guard entry.address == address, entry.interfaceIndex == interfaceIndex else {
                throw TransportError("recv(netlink)", message: "the kernel answered for another neighbour")
            }
            return entry
        case .failed(let code)? where code == ENOENT:
            return nil
        case .failed(let code)?:
            throw TransportError(call: "RTM_GETNEIGH", errno: code)
        case nil:
            throw TransportError("recv(netlink)", message: "the kernel's answer could not be read")
        }
    }
}
