/// Turns a file name offered by a peer into a safe name inside an inbox directory.
public enum InboxName {
    /// The longest stored name, in bytes of UTF-8 (the limit of Linux file systems).
    public static let maximumBytes = 255

    /// The base name to store under: the last path component, with every character a
    /// terminal escapes or that is invisible (`UnsafeText.isEscapedOnTerminal`,
    /// `UnsafeText.isInvisible`: controls, bidirectional controls, zero-width characters,
    /// blanks) and backslashes replaced by `_`; leading dots and spaces and trailing spaces
    /// removed, so nothing is hidden or special (`.`, `..`) or looks empty; a leading `-`
    /// prefixed with `_` (`-rf` is stored as `_-rf`), so no stored name reads as an option
    /// to a command given `*`; at most `maximumBytes` bytes, cut at a character; and `file`
    /// when nothing is left.
    public static func sanitized(_ offered: String) -> String {
        // Split on the scalar, not the character: a "/" that a prepended mark (U+0600...U+0605)
        // joins into one grapheme with it is still a path separator.
        let components = offered.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true)
        let lastComponent = components.last.map { String(String.UnicodeScalarView($0)) } ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in lastComponent.unicodeScalars {
            let unsafe = UnsafeText.isEscapedOnTerminal(scalar) || UnsafeText.isInvisible(scalar) || scalar == "\\"
            scalars.append(unsafe ? "_" : scalar)
        }
        var name = Substring(String(scalars)).drop(while: { $0 == "." || $0.isWhitespace })
        if name.first == "-" { name = "_" + name }
        var stored = String(name)
        while stored.utf8.count > maximumBytes { stored.removeLast() }
        while stored.last?.isWhitespace == true { stored.removeLast() }
        return stored.isEmpty ? "file" : stored
    }

    /// The first of `name`, `name (2).ext`, `name (3).ext`, ... for which `exists` is false.
    public static func unique(_ name: String, exists: (String) -> Bool) -> String {
        var number = 1
        while true {
            let candidate = variant(name, number: number)
            if !exists(candidate) { return candidate }
            number += 1
        }
    }

    /// Variant `number` of `name`: `name` itself for 1, else `stem (number).ext`, at most `maximumBytes`
    /// bytes. An extension too long to keep beside the number and a byte of the stem is
    /// treated as part of the stem, so a peer's name can never make the cutting go on forever.
    public static func variant(_ name: String, number: Int) -> String {
        guard number > 1 else { return name }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let numbered = " (\(number))"
        var stem = dot.map { String(name[..<$0]) } ?? name
        var ext = dot.map { String(name[$0...]) } ?? ""
        if numbered.utf8.count + ext.utf8.count >= maximumBytes {
            stem = name
            ext = ""
        }
        var base = Substring(stem)
        while !base.isEmpty, base.utf8.count + numbered.utf8.count + ext.utf8.count > maximumBytes { base = base.dropLast() }
        return String(base) + numbered + ext
    }
}
