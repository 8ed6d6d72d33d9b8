/// Reads the fields of a payload in order (docs/PROTOCOL.md, "Field encodings").
///
/// It reads the payload where it is (a frame's array, or the frame decoder's buffer), so it
/// lives only inside the call that lends it the bytes: every field it returns is a copy
/// (`String`, `[UInt8]`, `ArraySlice`). Each read checks the length left before it touches a
/// byte (a buffer pointer's subscript is not checked in release builds).
struct PayloadReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var offset = 0
    private let kind: Message.Kind

    init(_ bytes: UnsafeBufferPointer<UInt8>, kind: Message.Kind) {
        self.bytes = bytes
        self.kind = kind
    }

    /// For error messages only: `String(describing:)` is far too slow for every frame.
    private var frameName: String { "\(kind)".uppercased() }

    private func malformed(_ what: String) -> ProtocolError {
        ProtocolError(.malformedFrame, "\(frameName) ends before its \(what)")
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type, _ what: String) throws(ProtocolError) -> Integer {
        let size = MemoryLayout<Integer>.size
        guard bytes.count - offset >= size else { throw malformed(what) }
        defer { offset += size }
        // One unaligned load: the loop over a range of indices it replaces went through the
        // range's generic witnesses (~2% of receiving a 64-byte TEXT, two lengths a frame).
        return Integer(bigEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset, as: Integer.self))
    }

    mutating func raw(_ count: Int, _ what: String) throws(ProtocolError) -> [UInt8] {
        guard bytes.count - offset >= count else { throw malformed(what) }
        defer { offset += count }
        return Array(UnsafeBufferPointer(rebasing: bytes[offset..<(offset + count)]))
    }

    /// A `str`: u16 length and UTF-8 of at most `limit` bytes.
    /// - Throws: `code` (`.malformedFrame` unless given) when it is longer or not valid UTF-8.
    mutating func string(_ what: String, limit: Int, code: ProtocolError.Code = .malformedFrame) throws(ProtocolError) -> String {
        let count = Int(try integer(UInt16.self, what))
        guard bytes.count - offset >= count else { throw malformed(what) }
        defer { offset += count }
        return try text(offset..<(offset + count), what, limit: limit, code: code)
    }

    /// The rest of the payload as UTF-8 text of at most `limit` bytes.
    /// - Throws: `.malformedFrame` when it is longer or not valid UTF-8.
    mutating func restText(_ what: String, limit: Int) throws(ProtocolError) -> String {
        defer { offset = bytes.count }
        return try text(offset..<bytes.count, what, limit: limit, code: .malformedFrame)
    }

    /// Text is checked where it enters: a peer's invalid UTF-8 would otherwise grow (each bad
    /// byte becomes the 3 bytes of U+FFFD) when it is relayed, past the limits below.
    private func text(_ range: Range<Int>, _ what: String, limit: Int, code: ProtocolError.Code) throws(ProtocolError) -> String {
        guard range.count <= limit else {
            throw ProtocolError(code, "\(frameName) \(what) is \(range.count) bytes; the limit is \(limit)")
        }
        let text = range.isEmpty ? "" : PayloadReader.validatedUTF8(UnsafeBufferPointer(rebasing: bytes[range]))
        guard let text else {
            throw ProtocolError(code, "\(frameName) \(what) is not valid UTF-8")
        }
        return text
    }

    /// `String(validating:as:)` without its cost on the common cases: that initialiser is
    /// generic and not inlinable, so each call looked its generic metadata up in the runtime's
    /// caches (~30% of receiving a 64-byte TEXT, three strings a frame, in a profile of
    /// `svc-bench sink`). Empty text (TEXT's `from` and `to` when a member sends to the room)
    /// needs no work; ASCII is valid UTF-8, and `String(decoding:as:)` over contiguous
    /// bytes is specialised; anything else goes through the validating initialiser.
    static func validatedUTF8(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        isASCII(buffer) ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
    }

    /// Whether every byte is below 0x80, eight at a time.
    private static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(buffer)
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= raw.count {
            high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < raw.count {
            high |= UInt64(raw[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// The rest of the payload, copied (the one copy of FILE_CHUNK data before the disk).
    mutating func rest() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return ArraySlice(UnsafeBufferPointer(rebasing: bytes[offset...]))
    }

    /// Bytes not read yet.
    var remaining: Int { bytes.count - offset }

    /// Checks nothing is left over.
    func end() throws(ProtocolError) {
        guard offset == bytes.count else {
            throw ProtocolError(.malformedFrame, "\(frameName) has \(bytes.count - offset) bytes after its last field")
        }
    }
}

/// Writes the fields of a payload.
struct PayloadWriter {
    var bytes: [UInt8] = []

    mutating func integer<Integer: FixedWidthInteger>(_ value: Integer) { bytes.appendBigEndian(value) }
    mutating func raw<Bytes: Sequence<UInt8>>(_ value: Bytes) { bytes.append(contentsOf: value) }

    /// UTF-8 appended from the string's storage in one copy: appending the `UTF8View` as a
    /// sequence retained the string and went through its generic copying (~10% of sending
    /// a 64-byte TEXT in a profile of `svc-bench flood`).
    mutating func raw(_ value: String.UTF8View) {
        if value.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: value)
        }
    }

    /// A `str`, cut to 65,535 bytes at a character boundary.
    mutating func string(_ value: String) {
        if value.utf8.count <= Int(UInt16.max) {
            integer(UInt16(value.utf8.count))
            raw(value.utf8)
            return
        }
        var utf8 = Substring(value)
        while utf8.utf8.count > Int(UInt16.max) { utf8 = utf8.dropLast() }
        integer(UInt16(utf8.utf8.count))
        bytes.append(contentsOf: utf8.utf8)
    }
}

extension PayloadWriter {
    /// Appends a whole TEXT frame (header, `from`, `to`, `text`) to `buffer` with one append
    /// and one copy of each field, the bytes `Message.encode(into:)` writes through the
    /// general path (its appends of each integer and field, and the header patched in
    /// afterwards, were ~20% of sending a 64-byte TEXT in a profile of `svc-bench flood`). A
    /// frame of up to 1 KiB is written on the stack first; a larger one where it will lie.
    /// - Returns: nil, with `buffer` untouched, when a name is over 65,535 bytes (the general
    ///   path cuts it at a character boundary); false, untouched, when the payload would pass
    ///   `Frame.maximumPayload`; true once appended.
    static func appendTextFrame(type: UInt16, from: borrowing String, to: borrowing String, text: borrowing String,
                                into buffer: inout [UInt8]) -> Bool? {
        // Read through `utf8Span`, borrowed: `utf8` made a view holding a copy of each string
        // (a retain and a release). The span needs contiguous UTF-8, which every `String` has
        // here (only Foundation's bridged strings, on Apple platforms, lack it; no tool links
        // Foundation).
        let fromCount = from.utf8Span.count
        let toCount = to.utf8Span.count
        guard fromCount <= Int(UInt16.max), toCount <= Int(UInt16.max) else { return nil }
        let textCount = text.utf8Span.count
        guard textCount <= Frame.maximumPayload else { return false } // so the sum below cannot overflow
        let length = 4 + fromCount + toCount + textCount
        guard length <= Frame.maximumPayload else { return false }
        let size = Frame.headerSize + length
        func write(_ frame: UnsafeMutableRawBufferPointer, at start: Int) {
            var offset = start
            func integer<Integer: FixedWidthInteger>(_ value: Integer) {
                frame.storeBytes(of: value.bigEndian, toByteOffset: offset, as: Integer.self)
                offset += MemoryLayout<Integer>.size
            }
            integer(UInt32(length))
            integer(type)
            integer(UInt16(0)) // flags
            integer(UInt16(fromCount))
            offset = copyUTF8(from, count: fromCount, to: frame, at: offset)
            integer(UInt16(toCount))
            offset = copyUTF8(to, count: toCount, to: frame, at: offset)
            _ = copyUTF8(text, count: textCount, to: frame, at: offset)
        }
        if size <= 1024 {
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { frame in
                write(frame, at: 0)
                buffer.append(contentsOf: UnsafeRawBufferPointer(frame))
            }
        } else {
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: size)) // grows geometrically, as appends do
            buffer.withUnsafeMutableBytes { write($0, at: start) }
        }
        return true
    }

    /// Copies `count` (its UTF-8 size) bytes of `value` into `frame` at `offset`; returns the
    /// offset after them.
    private static func copyUTF8(_ value: borrowing String, count: Int, to frame: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard count > 0 else { return offset }
        let target = UnsafeMutableRawBufferPointer(rebasing: frame[offset..<(offset + count)])
        value.utf8Span.span.withUnsafeBytes { target.copyMemory(from: $0) }
        return offset + count
    }

}
