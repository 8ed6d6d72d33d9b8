/// One frame: an 8-byte header (payload length `u32`, type `u16`, flags `u16`, big-endian)
/// and its payload. See docs/PROTOCOL.md.
public struct Frame: Sendable, Hashable {
    /// The largest payload a frame may carry: 1 MiB.
    public static let maximumPayload = 1 << 20
    public static let headerSize = 8

    public let type: UInt16
    public let flags: UInt16
    public let payload: [UInt8]

    public init(type: UInt16, flags: UInt16 = 0, payload: [UInt8]) {
        self.type = type
        self.flags = flags
        self.payload = payload
    }

    /// Appends the header and payload to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        precondition(payload.count <= Frame.maximumPayload, "frame payload over 1 MiB")
        buffer.reserveCapacity(buffer.count + Frame.headerSize + payload.count)
        buffer.appendBigEndian(UInt32(payload.count))
        buffer.appendBigEndian(type)
        buffer.appendBigEndian(flags)
        buffer.append(contentsOf: payload)
    }

    public var encoded: [UInt8] {
        var buffer: [UInt8] = []
        encode(into: &buffer)
        return buffer
    }
}

/// Reassembles frames from a byte stream: bytes go in as they arrive, whole frames come out.
///
/// A frame split across many reads and many frames in one read are both fine. A header that
/// announces more than `maximumPayload` is rejected as soon as the header is complete, before
/// any of the payload is buffered.
public struct FrameDecoder: Sendable {
    /// The largest payload accepted from here on (it may change between frames, e.g. grow
    /// once a peer has completed its handshake).
    public var maximumPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumPayload: Int = Frame.maximumPayload) {
        self.maximumPayload = maximumPayload
    }

    /// Bytes received that are not part of a returned frame yet.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil when more bytes are needed.
    /// - Throws: `ProtocolError` `.frameTooLarge`; the stream cannot be resynchronised after it.
    public mutating func next() throws(ProtocolError) -> Frame? {
        guard let header = try nextHeader() else { return nil }
        // Copied through a pointer: a slice of the buffer cost a retain and a release per frame.
        let payload = buffer.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[header.payload])) }
        consume(header)
        return Frame(type: header.type, flags: header.flags, payload: payload)
    }

    /// A frame decoded in place: its payload's size, and its message or why it is not one.
    public struct DecodedFrame: Sendable {
        public let payloadCount: Int
        public let message: Result<Message, ProtocolError>
    }

    /// The next whole frame decoded as a message straight from the buffer, as
    /// `Message(decoding:memberKeys:)` decodes `next()`'s frame, without making the frame's
    /// payload array (one allocation, copy and free per 64-byte TEXT received).
    /// - Returns: nil when more bytes are needed. The frame is consumed whether or not its
    ///   message decodes, so a link may go on after an error that does not close it.
    /// - Throws: `ProtocolError` `.frameTooLarge`; the stream cannot be resynchronised after it.
    public mutating func nextMessage(memberKeys: Bool) throws(ProtocolError) -> DecodedFrame? {
        guard let header = try nextHeader() else { return nil }
        let message = buffer.withUnsafeBufferPointer { buffer in
            Result { () throws(ProtocolError) in
                try Message(type: header.type, flags: header.flags, payload: UnsafeBufferPointer(rebasing: buffer[header.payload]),
                            memberKeys: memberKeys)
            }
        }
        consume(header)
        return DecodedFrame(payloadCount: header.payload.count, message: message)
    }

    /// A whole frame's header and where its payload is in `buffer`.
    private struct Header {
        let type: UInt16
        let flags: UInt16
        let payload: Range<Int>
    }

    /// The header of the next frame once the whole frame is buffered.
    private func nextHeader() throws(ProtocolError) -> Header? {
        guard bufferedByteCount >= Frame.headerSize else { return nil }
        let length = Int(buffer.readBigEndian(UInt32.self, at: start))
        guard length <= maximumPayload else {
            throw ProtocolError(.frameTooLarge, "a frame announced \(length) bytes; the limit is \(maximumPayload)")
        }
        guard bufferedByteCount >= Frame.headerSize + length else { return nil }
        let payloadStart = start + Frame.headerSize
        return Header(type: buffer.readBigEndian(UInt16.self, at: start + 4), flags: buffer.readBigEndian(UInt16.self, at: start + 6),
                      payload: payloadStart..<(payloadStart + length))
    }

    /// Drops the frame `header` belongs to from the buffer.
    private mutating func consume(_ header: Header) {
        start = header.payload.upperBound
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16384)  // idle links stay small
            start = 0
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    func readBigEndian<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer {
        var value = Integer.zero
        for index in 0..<MemoryLayout<Integer>.size {
            value = value << 8 | Integer(self[offset + index])
        }
        return value
    }
}
