/// Makes text from the network safe to print on a terminal.
///
/// Control characters (C0, DEL, C1), Unicode line and paragraph separators and bidirectional
/// overrides are written as `\u{1B}`, so a peer cannot move the cursor, change colours or
/// reorder what the user reads. Everything else, backslashes included, is printed as it is.
public enum TerminalSafe {
    public static func escape(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Decodes bytes as UTF-8 (invalid sequences become U+FFFD) and escapes them.
    public static func escape(bytes: some Collection<UInt8>) -> String {
        escape(String(decoding: bytes, as: UTF8.self))
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
