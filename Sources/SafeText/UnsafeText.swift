/// The one definition of text from the network that is unsafe: which characters a terminal
/// must never receive as they are, and which a member name may not contain.
///
/// The two rules are nested on purpose: every character escaped on a terminal is also refused
/// in a name, so a name can always be printed as it is.
public enum UnsafeText {
    /// True for the characters a terminal must not receive as they are: C0 and C1 controls and
    /// DEL (they move the cursor, change colours, set the window title), the Unicode line and
    /// paragraph separators, and the bidirectional controls (U+061C, U+200E, U+200F,
    /// U+202A to U+202E, U+2066 to U+2069), which reorder what the user reads.
    public static func isEscapedOnTerminal(_ scalar: Unicode.Scalar) -> Bool {
        // Printable ASCII is none of these. Most text is printable ASCII, and each property
        // below is a table lookup: they were 7% of `svc-browse --help`'s CPU time.
        if (0x20...0x7E).contains(scalar.value) { return false }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return scalar.properties.isBidiControl
        }
    }

    /// True for the characters that draw nothing, or a blank, although they are not
    /// whitespace: general category Cf (zero-width spaces and joiners, soft hyphen, tags,
    /// ...), every default-ignorable code point (variation selectors, Hangul fillers U+115F,
    /// U+1160, U+3164, U+FFA0, ...), and the letters and symbols fonts draw as an empty cell:
    /// U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD and U+16FE4
    /// KHITAN SMALL SCRIPT FILLER. Such a character can hide inside a name or a file name, or
    /// pass for a space in one.
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.generalCategory == .format || properties.isDefaultIgnorableCodePoint { return true }
        switch scalar.value {
        case 0x2800, 0x1D159, 0x16FE4, 0x115F, 0x1160, 0x3164, 0xFFA0: return true
        default: return false
        }
    }

    /// What `scalar` is, said as why it may not appear in a member name ("a space (U+0020)"),
    /// or nil when it may. Refused: everything `isEscapedOnTerminal` escapes, whitespace,
    /// everything `isInvisible` names, private-use, unassigned and surrogate code points, and
    /// noncharacters.
    public static func problem(inNameCharacter scalar: Unicode.Scalar) -> String? {
        let properties = scalar.properties
        let code = codePoint(scalar)
        if isEscapedOnTerminal(scalar) { return "a control or bidirectional character (\(code))" }
        if properties.isWhitespace { return "a space (\(code))" }
        if properties.isNoncharacterCodePoint { return "a noncharacter (\(code))" }
        if isInvisible(scalar) { return "an invisible or blank character (\(code))" }
        switch properties.generalCategory {
        case .privateUse: return "a private-use character (\(code))"
        case .unassigned: return "an unassigned code point (\(code))"
        case .surrogate: return "a surrogate code point (\(code))"
        default: return nil
        }
    }

    /// `U+XXXX`, at least four hex digits, as Unicode writes code points.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// Makes text from the network safe to print on a terminal.
///
/// Every character `UnsafeText.isEscapedOnTerminal` names is written as `\u{1B}`, so a peer
/// cannot move the cursor, change colours or reorder what the user reads, except the tab
/// (U+0009): it only moves the cursor right to the next tab stop on the same line, so room
/// text with tabs is shown with its tabs. Everything else, backslashes included, is printed
/// as it is. Escaping (`.text`) is idempotent: the escapes are plain ASCII, so escaping escaped text
/// changes nothing.
///
/// A name that identifies something (a service instance name) is escaped further, in the
/// `.name` mode: see `Mode`.
public enum TerminalSafe {
    /// What `escape` writes as an escape.
    public enum Mode: Sendable {
        /// Text to read (room lines, messages): what `UnsafeText.isEscapedOnTerminal` names,
        /// but the tab.
        case text
        /// A name to tell apart from others and type back (service instance names): also the
        /// tab and every `UnsafeText.isInvisible` character as `\u{HEX}` ("Living\u{200B} room"
        /// does not pass for "Living room"), and `\` and `"` as `\\` and `\"`, so the name can
        /// stand between double quotes (`quoted`) and `unescape` gives it back exactly.
        case name
    }

    /// Whether `escape` writes `scalar` as an escape: what `UnsafeText.isEscapedOnTerminal`
    /// names, but the tab.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        isEscaped(scalar, .text)
    }

    /// Whether `escape(_:mode:)` writes `scalar` as `\u{HEX}` (in `.name` mode, `\` and `"`
    /// are escaped too, but with a backslash: this is false for them).
    public static func isEscaped(_ scalar: Unicode.Scalar, _ mode: Mode) -> Bool {
        switch mode {
        case .text: scalar != "\t" && UnsafeText.isEscapedOnTerminal(scalar)
        case .name: scalar == "\t" || UnsafeText.isEscapedOnTerminal(scalar) || UnsafeText.isInvisible(scalar)
        }
    }

    /// `text` with every unsafe character (`isEscaped(_:mode:)`) written as `\u{HEX}`, and in
    /// `.name` mode `\` and `"` written as `\\` and `\"`.
    public static func escape(_ text: String, mode: Mode = .text) -> String {
        guard !isPlainASCII(text, mode), text.unicodeScalars.contains(where: { needsEscape($0, mode) }) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isEscaped(scalar, mode) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                if mode == .name, scalar == "\\" || scalar == "\"" { result.unicodeScalars.append("\\") }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, _ mode: Mode) -> Bool {
        isEscaped(scalar, mode) || (mode == .name && (scalar == "\\" || scalar == "\""))
    }

    /// True when `text` is ASCII without a control character but the tab (`.text`), or
    /// without a control character, `\` or `"` (`.name`): nothing to escape.
    /// Checked byte by byte, without the Unicode property tables that `isEscaped` reads for
    /// each scalar (14% of svc-publish's CPU time in a profile of row 7, printing 64-byte texts).
    private static func isPlainASCII(_ text: String, _ mode: Mode) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            switch mode {
            case .text: bytes.allSatisfy { byte in (byte >= 0x20 && byte < 0x7F) || byte == 0x09 }
            case .name: bytes.allSatisfy { byte in byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "\"") }
            }
        }
    }

    /// Decodes bytes as UTF-8 (invalid sequences become U+FFFD) and escapes them.
    public static func escape(bytes: some Collection<UInt8>, mode: Mode = .text) -> String {
        escape(String(decoding: bytes, as: UTF8.self), mode: mode)
    }
}
