/// Reads the fields of a payload in order (docs/PROTOCOL.md, "Field encodings").
struct PayloadReader {
    private let bytes: [UInt8]
    private var offset = 0
    private let kind: Message.Kind

    init(_ bytes: [UInt8], kind: Message.Kind) {
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
        return bytes.readBigEndian(Integer.self, at: offset)
    }

    mutating func raw(_ count: Int, _ what: String) throws(ProtocolError) -> [UInt8] {
        guard bytes.count - offset >= count else { throw malformed(what) }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// A `str`: u16 length and UTF-8 of at most `limit` bytes.
    /// - Throws: `code` (`.malformedFrame` unless given) when it is longer or not valid UTF-8.
    mutating func string(_ what: String, limit: Int, code: ProtocolError.Code = .malformedFrame) throws(ProtocolError) -> String {
        let count = Int(try integer(UInt16.self, what))
        guard bytes.count - offset >= count else { throw malformed(what) }
        defer { offset += count }
        return try text(bytes[offset..<(offset + count)], what, limit: limit, code: code)
    }

    /// The rest of the payload as UTF-8 text of at most `limit` bytes.
    /// - Throws: `.malformedFrame` when it is longer or not valid UTF-8.
    mutating func restText(_ what: String, limit: Int) throws(ProtocolError) -> String {
        defer { offset = bytes.count }
        return try text(bytes[offset...], what, limit: limit, code: .malformedFrame)
    }

    /// Text is checked where it enters: a peer's invalid UTF-8 would otherwise grow (each bad
    /// byte becomes the 3 bytes of U+FFFD) when it is relayed, past the limits below.
    private func text(_ slice: ArraySlice<UInt8>, _ what: String, limit: Int, code: ProtocolError.Code) throws(ProtocolError) -> String {
        guard slice.count <= limit else {
            throw ProtocolError(code, "\(frameName) \(what) is \(slice.count) bytes; the limit is \(limit)")
        }
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw ProtocolError(code, "\(frameName) \(what) is not valid UTF-8")
        }
        return text
    }

    /// The rest of the payload, sharing its storage (no copy).
    mutating func rest() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return bytes[offset...]
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

    /// A `str`, cut to 65,535 bytes at a character boundary.
    mutating func string(_ value: String) {
        if value.utf8.count <= Int(UInt16.max) {
            integer(UInt16(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
            return
        }
        var utf8 = Substring(value)
        while utf8.utf8.count > Int(UInt16.max) { utf8 = utf8.dropLast() }
        integer(UInt16(utf8.utf8.count))
        bytes.append(contentsOf: utf8.utf8)
    }
}
