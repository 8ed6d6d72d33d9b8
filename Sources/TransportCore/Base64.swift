/// Base64 (RFC 4648 §4, the standard alphabet), without Foundation: the tools do not load it
/// (Foundation and its ICU data doubled their start-up time and resident memory).
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    /// `bytes` as base64 without padding.
    public static func encodeUnpadded(_ bytes: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { text.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return text
    }

    /// Unpadded base64 to bytes; nil on any other character, an impossible length, or leftover
    /// bits that are not zero (so that each byte string has one spelling).
    public static func decodeUnpadded(_ text: some StringProtocol) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        var accumulator = 0
        var bits = 0
        for character in text {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            accumulator = (accumulator << 6 | value) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((accumulator >> bits) & 0xFF))
            }
        }
        guard accumulator & ((1 << bits) - 1) == 0 else { return nil }
        return bytes
    }

    /// Padded base64 (a multiple of four characters, at most two `=` at the end) to bytes; nil
    /// otherwise, as for `decodeUnpadded`.
    public static func decodePadded(_ text: some StringProtocol) -> [UInt8]? {
        let text = Substring(text)
        guard text.count % 4 == 0 else { return nil }
        let padding = text.reversed().prefix { $0 == "=" }.count
        guard padding <= 2 else { return nil }
        return decodeUnpadded(text.dropLast(padding))
    }
}
