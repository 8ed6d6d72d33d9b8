/// The kernel's neighbour table (IPv6 neighbour discovery, IPv4 ARP) as a netlink dump
/// (`RTM_GETNEIGH`) describes it: the request to send and a decoder for the answers. Pure: the
/// socket is `TransportPOSIX`'s. Every length in an answer is checked before it is used; a
/// malformed message ends the decoding (what came before it stands).
public enum NeighbourDump {
    /// One entry: the neighbour's address on interface `interfaceIndex` and its link-layer
    /// (hardware) address.
    public struct Entry: Sendable, Hashable {
        public let interfaceIndex: UInt32
        public let address: IPAddress
        public let linkLayerAddress: [UInt8]
    }

    /// What one read of the netlink socket held.
    public struct Batch: Sendable, Hashable {
        public var entries: [Entry] = []
        /// `NLMSG_DONE` (or an error) came: the dump is over.
        public var isDone = false
    }

    static let headerSize = 16
    static let messageDone: UInt16 = 3
    static let messageError: UInt16 = 2
    static let newNeighbour: UInt16 = 28
    static let getNeighbour: UInt16 = 30
    static let attributeDestination: UInt16 = 1
    static let attributeLinkLayerAddress: UInt16 = 2
    /// `AF_INET`, `AF_INET6` on Linux.
    static func familyNumber(_ family: IPAddress.Family) -> UInt8 { family == .ipv4 ? 2 : 10 }

    /// `RTM_GETNEIGH` with `NLM_F_REQUEST | NLM_F_DUMP` for one address family, sequence `sequence`.
    public static func request(family: IPAddress.Family, sequence: UInt32) -> [UInt8] {
        let body: [UInt8] = [familyNumber(family)] + Array(repeating: 0, count: 11)   // struct ndmsg
        var bytes: [UInt8] = []
        bytes += littleEndian(UInt32(headerSize + body.count))
        bytes += littleEndian(getNeighbour)
        bytes += littleEndian(UInt16(0x0001 | 0x0300))
        bytes += littleEndian(sequence)
        bytes += littleEndian(UInt32(0))
        return bytes + body
    }

    /// Decodes the messages of one read.
    public static func decode(_ bytes: [UInt8]) -> Batch {
        var batch = Batch()
        var offset = 0
        while bytes.count - offset >= headerSize {
            let length = Int(readUInt32(bytes, offset))
            guard length >= headerSize, length <= bytes.count - offset else { break }
            let type = readUInt16(bytes, offset + 4)
            if type == messageDone || type == messageError {
                batch.isDone = true
                break
            }
            if type == newNeighbour, let entry = entry(bytes[(offset + headerSize)..<(offset + length)]) {
                batch.entries.append(entry)
            }
            offset += (length + 3) & ~3
        }
        return batch
    }

    /// One `struct ndmsg` and its attributes.
    static func entry(_ body: ArraySlice<UInt8>) -> Entry? {
        let start = body.startIndex
        guard body.count >= 12 else { return nil }
        let family = body[start]
        let interfaceIndex = readUInt32(body, start + 4)
        var destination: [UInt8]?
        var linkLayer: [UInt8]?
        var offset = start + 12
        while body.endIndex - offset >= 4 {
            let length = Int(readUInt16(body, offset))
            guard length >= 4, length <= body.endIndex - offset else { break }
            let value = Array(body[(offset + 4)..<(offset + length)])
            switch readUInt16(body, offset + 2) {
            case attributeDestination: destination = value
            case attributeLinkLayerAddress: linkLayer = value
            default: break
            }
            offset += (length + 3) & ~3
        }
        guard let destination, let linkLayer, !linkLayer.isEmpty, linkLayer.count <= 32,
              family == familyNumber(destination.count == 4 ? .ipv4 : .ipv6),
              let address = IPAddress(bytes: destination) else { return nil }
        return Entry(interfaceIndex: interfaceIndex, address: address, linkLayerAddress: linkLayer)
    }

    static func readUInt16<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ offset: Bytes.Index) -> UInt16 where Bytes.Index == Int {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func readUInt32<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ offset: Bytes.Index) -> UInt32 where Bytes.Index == Int {
        UInt32(readUInt16(bytes, offset)) | UInt32(readUInt16(bytes, offset + 2)) << 16
    }

    static func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
