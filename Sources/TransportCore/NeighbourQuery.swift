/// One entry of the kernel's neighbour table (IPv6 neighbour discovery, IPv4 ARP) asked for
/// over netlink (`RTM_GETNEIGH` for one address on one interface, not a dump): the request to
/// send and a decoder for the answer. Pure: the socket is `TransportPOSIX`'s. Every length in
/// an answer is checked before it is used; a malformed answer decodes to nil.
public enum NeighbourQuery {
    /// The entry for one neighbour: its address on interface `interfaceIndex`, its state
    /// (`NUD_*`), its link-layer (hardware) address when it has one, and how long ago the
    /// kernel last changed it (`NDA_CACHEINFO`'s `ndm_updated`, in `USER_HZ` ticks).
    public struct Entry: Sendable, Hashable {
        public let interfaceIndex: UInt32
        public let address: IPAddress
        public let state: UInt16
        public let linkLayerAddress: [UInt8]?
        public let updatedTicksAgo: UInt32?

        public init(interfaceIndex: UInt32, address: IPAddress, state: UInt16, linkLayerAddress: [UInt8]?, updatedTicksAgo: UInt32?) {
            self.interfaceIndex = interfaceIndex
            self.address = address
            self.state = state
            self.linkLayerAddress = linkLayerAddress
            self.updatedTicksAgo = updatedTicksAgo
        }

        /// `NUD_VALID`: reachable, stale, delay, probe, permanent or no-ARP (an incomplete or
        /// failed entry has no usable hardware address).
        public var isValid: Bool { state & 0xDE != 0 }
    }

    /// What the kernel answered.
    public enum Answer: Sendable, Hashable {
        case entry(Entry)
        /// `NLMSG_ERROR` with this errno (`ENOENT`, 2: no entry for that address).
        case failed(errno: Int32)
    }

    static let headerSize = 16
    static let messageError: UInt16 = 2
    static let newNeighbour: UInt16 = 28
    static let getNeighbour: UInt16 = 30
    static let attributeDestination: UInt16 = 1
    static let attributeLinkLayerAddress: UInt16 = 2
    static let attributeCacheInfo: UInt16 = 3
    /// `AF_INET`, `AF_INET6` on Linux.
    static func familyNumber(_ family: IPAddress.Family) -> UInt8 { family == .ipv4 ? 2 : 10 }

    /// `RTM_GETNEIGH` with `NLM_F_REQUEST` only (a single-entry get, Linux 5.0 and later) for
    /// `address` on interface `interfaceIndex` (`NDA_DST`), sequence `sequence`.
    public static func request(address: IPAddress, interfaceIndex: UInt32, sequence: UInt32) -> [UInt8] {
        // struct ndmsg: family, 3 pad bytes, ifindex, state, flags, type.
        let header: [UInt8] = [familyNumber(address.family), 0, 0, 0] + littleEndian(interfaceIndex) + [0, 0, 0, 0]
        let destination = littleEndian(UInt16(4 + address.bytes.count)) + littleEndian(attributeDestination) + address.bytes
        let body = header + destination   // 4 or 16 address bytes: already a multiple of 4
        var bytes: [UInt8] = []
        bytes += littleEndian(UInt32(headerSize + body.count))
        bytes += littleEndian(getNeighbour)
        bytes += littleEndian(UInt16(0x0001))
        bytes += littleEndian(sequence)
        bytes += littleEndian(UInt32(0))
        return bytes + body
    }

    /// Decodes the first message of one read: the entry, the kernel's error, or nil when the
    /// bytes hold neither (cut short, another message type, a malformed entry).
    public static func decode(_ bytes: [UInt8]) -> Answer? {
        guard bytes.count >= headerSize else { return nil }
        let length = Int(readUInt32(bytes, 0))
        guard length >= headerSize, length <= bytes.count else { return nil }
        switch readUInt16(bytes, 4) {
        case messageError:
            guard length >= headerSize + 4 else { return nil }
            let code = Int32(bitPattern: readUInt32(bytes, headerSize))
            return .failed(errno: code == Int32.min ? Int32.max : -code)
        case newNeighbour:
            return entry(bytes[headerSize..<length]).map(Answer.entry)
        default:
            return nil
        }
    }

    /// One `struct ndmsg` and its attributes.
    static func entry(_ body: ArraySlice<UInt8>) -> Entry? {
        let start = body.startIndex
        guard body.count >= 12 else { return nil }
        let family = body[start]
        let interfaceIndex = readUInt32(body, start + 4)
        let state = readUInt16(body, start + 8)
        var destination: [UInt8]?
        var linkLayer: [UInt8]?
        var updated: UInt32?
        var offset = start + 12
        while body.endIndex - offset >= 4 {
            let length = Int(readUInt16(body, offset))
            guard length >= 4, length <= body.endIndex - offset else { return nil }
            let value = Array(body[(offset + 4)..<(offset + length)])
            switch readUInt16(body, offset + 2) {
            case attributeDestination: destination = value
            case attributeLinkLayerAddress: linkLayer = value
            // struct nda_cacheinfo: ndm_confirmed, ndm_used, ndm_updated, ndm_refcnt.
            case attributeCacheInfo where value.count >= 16: updated = readUInt32(value, 8)
            default: break
            }
            offset += (length + 3) & ~3
        }
        guard let destination, family == familyNumber(destination.count == 4 ? .ipv4 : .ipv6),
              let address = IPAddress(bytes: destination) else { return nil }
        let hardware = linkLayer.flatMap { $0.isEmpty || $0.count > 32 ? nil : $0 }
        return Entry(interfaceIndex: interfaceIndex, address: address, state: state, linkLayerAddress: hardware, updatedTicksAgo: updated)
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
