/// Splits a byte stream into lines ending in `\n` (a `\r` before it is dropped), keeping the
/// partial line between reads. A line longer than `maximumLineLength` is an error rather than
/// a reason to buffer without bound.
public struct LineFramer: Sendable {
    public struct LineTooLong: Error, Sendable, Hashable, CustomStringConvertible {
        public let limit: Int
        public var description: String { "a line of more than \(limit) bytes arrived; lines are limited to \(limit) bytes" }
    }

    public let maximumLineLength: Int
    private var pending: [UInt8] = []

    public init(maximumLineLength: Int = 65536) {
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes received but not yet part of a whole line.
    public var bufferedByteCount: Int { pending.count }

    /// Feeds bytes and returns every line they complete, without the line ending.
    /// - Throws: `LineTooLong` once a line exceeds the limit; the framer is then unusable.
    public mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(LineTooLong) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            pending.append(contentsOf: rest[..<newline])
            rest = rest[rest.index(after: newline)...]
            if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
            guard pending.count <= maximumLineLength else { throw LineTooLong(limit: maximumLineLength) }
            lines.append(pending)
            pending.removeAll(keepingCapacity: true)
        }
        pending.append(contentsOf: rest)
        guard pending.count <= maximumLineLength + 1 else { throw LineTooLong(limit: maximumLineLength) }
        return lines
    }

    /// At end of stream: the last line if it had no line ending.
    public mutating func finish() -> [UInt8]? {
        defer { pending.removeAll() }
        return pending.isEmpty ? nil : pending
    }
}
