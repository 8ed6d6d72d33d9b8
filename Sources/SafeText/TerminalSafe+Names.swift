extension TerminalSafe {
    /// A service instance name (or a TXT item) between double quotes, as every tool shows
    /// one: escaped in the `.name` mode, so text from the network can neither close the quotes
    /// early and pass the rest of a line off as another item, nor hide a character that draws
    /// nothing ("Living\u{200B} room"). `unescape` gives the name back from what is shown.
    public static func quoted(_ name: String) -> String {
        "\"" + escape(name, mode: .name) + "\""
    }

    /// The name that `quoted` or `escape(_:mode: .name)` shows as `shown`, or nil when `shown`
    /// is not such a form. The inverse of the escaping: `\\` is `\`, `\"` is `"`, `\u{HEX}`
    /// (1 to 6 hex digits) is that code point; the form may stand between double quotes.
    ///
    /// Only what `.name` escaping writes is taken back, so nothing typed can stand for a name
    /// it would not show as: a backslash before anything else, a `"` that is not escaped
    /// (but the surrounding ones), `\u{...}` without its closing brace, with no digit, more
    /// than 6 digits or a non-hex one, a surrogate or a value past U+10FFFF, an escape of a
    /// character that is shown as it is (`\u{41}` for `A`), and a character that would have
    /// been escaped given raw, all make it nil. Hex digits may be upper or lower case, and
    /// leading zeros are allowed.
    public static func unescape(_ shown: String) -> String? {
        var scalars = Substring(shown).unicodeScalars[...]
        if scalars.first == "\"" {
            guard scalars.count >= 2, scalars.last == "\"" else { return nil }
            scalars = scalars.dropFirst().dropLast()
        }
        var result = String.UnicodeScalarView()
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\"": return nil
            case "\\":
                switch scalars.popFirst() {
                case "\\"?: result.append("\\")
                case "\""?: result.append("\"")
                case "u"?:
                    guard scalars.popFirst() == "{" else { return nil }
                    var value: UInt32 = 0
                    var digits = 0
                    var closed = false
                    while let next = scalars.popFirst() {
                        if next == "}" { closed = true; break }
                        // At most 6 digits: the value stays below 2^24, no overflow is possible.
                        guard digits < 6, let digit = hexValue(next) else { return nil }
                        value = value << 4 | digit
                        digits += 1
                    }
                    guard closed, digits > 0, let escaped = Unicode.Scalar(value), isEscaped(escaped, .name) else { return nil }
                    result.append(escaped)
                default: return nil
                }
            default:
                guard !isEscaped(scalar, .name) else { return nil }
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// The value of an ASCII hex digit, either case.
    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar.value {
        case 0x30...0x39: scalar.value - 0x30
        case 0x41...0x46: scalar.value - 0x41 + 10
        case 0x61...0x66: scalar.value - 0x61 + 10
        default: nil
        }
    }
}
