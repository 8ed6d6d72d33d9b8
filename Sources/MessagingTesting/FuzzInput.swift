/// A fuzzer's input read as a sequence of operations: bytes and integers are taken from the
/// front; past the end, reads return zeros, so every input is a valid program.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { index >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// The next `count` bytes as a big-endian integer (at most 8).
    public mutating func integer(bytes count: Int) -> UInt64 {
        (0..<min(count, 8)).reduce(0) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// The next `count` bytes; what the input lacks is zeros (so that a short input can still
    /// make a maximum-size frame).
    public mutating func take(_ count: Int) -> [UInt8] {
        let available = max(0, min(count, bytes.count - index))
        var result = Array(bytes[index..<(index + available)])
        index += available
        if available < count { result.append(contentsOf: repeatElement(0, count: count - available)) }
        return result
    }
}
