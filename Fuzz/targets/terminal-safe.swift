// Fuzz target: how names are shown and read back (SafeText): `TerminalSafe.escape(_:mode:
// .name)`, `quoted` and `unescape`, built with the SafeText module alone. The input, read as
// UTF-8 (invalid bytes become U+FFFD), is both a name and a form someone typed.
// Properties: no crash; for any name x, `unescape(quoted(x))` and `unescape(escape(x, .name))`
// give x back, scalar for scalar (not only canonically equal); when `unescape(s)` gives a
// name n, then `unescape(quoted(n))` gives n, and s (without its surrounding quotes) is what
// `escape(n, .name)` writes but for the case and leading zeros of its hex digits: nothing
// typed stands for a name it would not show as.
import SafeText

/// `shown` (a form `unescape` took) with its quotes dropped and each `\u{HEX}` written as
/// `escape` writes it: upper case, no leading zeros.
func canonical(_ shown: String) -> String {
    var scalars = Substring(shown).unicodeScalars[...]
    if scalars.first == "\"" { scalars = scalars.dropFirst().dropLast() }
    var result = ""
    while let scalar = scalars.popFirst() {
        guard scalar == "\\" else {
            result.unicodeScalars.append(scalar)
            continue
        }
        let next = scalars.popFirst()!
        guard next == "u" else {
            result.unicodeScalars.append(contentsOf: [scalar, next])
            continue
        }
        _ = scalars.popFirst() // {
        var digits = ""
        while let digit = scalars.popFirst(), digit != "}" { digits.unicodeScalars.append(digit) }
        result += "\\u{" + String(UInt32(digits, radix: 16)!, radix: 16, uppercase: true) + "}"
    }
    return result
}

func same(_ a: String?, _ b: String) -> Bool {
    guard let a else { return false }
    return a.unicodeScalars.elementsEqual(b.unicodeScalars)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTerminalSafe(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let quoted = TerminalSafe.quoted(text)
    precondition(same(TerminalSafe.unescape(quoted), text), "quoted \(quoted.debugDescription) does not read back as its name")
    let escaped = TerminalSafe.escape(text, mode: .name)
    precondition(same(TerminalSafe.unescape(escaped), text), "escaped \(escaped.debugDescription) does not read back as its name")
    if let name = TerminalSafe.unescape(text) {
        precondition(same(TerminalSafe.unescape(TerminalSafe.quoted(name)), name), "the name read from \(text.debugDescription) does not survive quoting")
        precondition(same(canonical(text), TerminalSafe.escape(name, mode: .name)),
                     "\(text.debugDescription) reads as a name shown as \(TerminalSafe.escape(name, mode: .name).debugDescription)")
    }
    return 0
}
