extension FileTransfers {
    /// The text of a `FILE_RESULT` stored that answers a streamed offer at once (the receiver
    /// holds the file of its resume tag already): the SHA-256 of what it holds, in 64 lowercase
    /// hex digits, a space, and the name it is stored under (docs/PROTOCOL.md, "Files"). The
    /// sender compares that digest with its file's, so it never reports one the receiver does
    /// not hold.
    static func storedAtOnceAnswer(name: String, digest: [UInt8]) -> String {
        hexString(digest) + " " + name
    }

    /// The digest and name of a `storedAtOnceAnswer`, or nil when `text` is not one.
    static func parseStoredAtOnceAnswer(_ text: String) -> (digest: [UInt8], name: String)? {
        let bytes = Array(text.utf8)
        guard bytes.count > 65, bytes[64] == UInt8(ascii: " ") else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else { return nil }
            digest.append(high << 4 | low)
            index += 2
        }
        return (digest, String(decoding: bytes[65...], as: UTF8.self))
    }

    /// The value of a lowercase hex digit, or nil.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
