import Glibc
import TransportCore

/// The kernel's neighbour table of this network namespace, read over netlink (`RTM_GETNEIGH`).
enum NeighbourTable {
    /// Bytes read from one dump at most (about 40,000 entries; the kernel keeps at most
    /// `gc_thresh3`, 1,024 by default, per family).
    static let maximumDumpBytes = 4 << 20

    /// The link-layer address the kernel has for `address` on interface `interfaceIndex`, or
    /// nil when it has none (or the table cannot be read: the caller then counts the address
    /// less finely, never more).
    static func linkLayerAddress(of address: IPAddress, interfaceIndex: UInt32) -> [UInt8]? {
        guard let entries = try? dump(address.family) else { return nil }
        return entries.first { $0.address == address && (interfaceIndex == 0 || $0.interfaceIndex == interfaceIndex) }?.linkLayerAddress
    }

    /// Every entry of one address family.
    static func dump(_ family: IPAddress.Family) throws(TransportError) -> [NeighbourDump.Entry] {
        let fd = try syscall("socket(AF_NETLINK)") { socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        _ = try syscall("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
        let request = NeighbourDump.request(family: family, sequence: 1)
        // With no address given, a netlink socket sends to the kernel (port 0).
        _ = try syscall("send(netlink)") { request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
        var entries: [NeighbourDump.Entry] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while total < maximumDumpBytes {
            let count = try syscall("recv(netlink)") { buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
            guard count > 0 else { break }
            total += count
            let batch = NeighbourDump.decode(Array(buffer[..<count]))
            entries += batch.entries
            if batch.isDone { break }
        }
        return entries
    }
}
