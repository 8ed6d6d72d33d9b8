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

    /// Which host a link-local peer's room-code guess is charged to (`NeighbourAttribution`).
    /// - Parameters:
    ///   - peer: a peer that connected to us.
    ///   - connectionAge: how long ago its connection was accepted.
    /// - Returns: `.exactAddress` when the table cannot be read, or the peer's interface is
    ///   not known (an IPv4 socket does not say which interface a peer came in on).
    /// - Important: one blocking netlink request and answer on the calling thread (tens of
    ///   microseconds; at most `answerTimeout`).
    public static func attribution(of peer: SocketEndpoint, connectionAge: Duration) throws(TransportError) -> NeighbourAttribution {
        let address = peer.address.unmappedIPv4 ?? peer.address
        guard peer.scopeID != 0 else { return .exactAddress }
        let entry = try entry(for: address, interfaceIndex: peer.scopeID)
        return NeighbourAttribution.decide(entry: entry, connectionAge: connectionAge, ticksPerSecond: sysconf(Int32(_SC_CLK_TCK)))
    }

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
