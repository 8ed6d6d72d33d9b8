/// Turns a file name offered by a peer into a safe name inside an inbox directory.
public enum InboxName {
    /// The base name to store under: the last path component, with control characters,
    /// slashes and backslashes replaced by `_`, leading dots removed so nothing is hidden or
    /// special (`.`, `..`), at most 255 bytes, and `file` when nothing is left.
    public static func sanitized(_ offered: String) -> String {
        let lastComponent = offered.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in lastComponent.unicodeScalars {
            let unsafe = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\"
            scalars.append(unsafe ? "_" : scalar)
        }
        var name = String(String(scalars).drop(while: { $0 == "." }))
        while name.utf8.count > 255 { name.removeLast() }
        return name.isEmpty ? "file" : name
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

    /// Variant `number` of `name`: `name` itself for 1, else `stem (number).ext`, at most 255
    /// bytes. An extension too long to keep beside the number and a byte of the stem is
    /// treated as part of the stem, so a peer's name can never make the cutting go on forever.
    public static func variant(_ name: String, number: Int) -> String {
        guard number > 1 else { return name }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let numbered = " (\(number))"
        var stem = dot.map { String(name[..<$0]) } ?? name
        var ext = dot.map { String(name[$0...]) } ?? ""
        if numbered.utf8.count + ext.utf8.count >= 255 {
            stem = name
            ext = ""
        }
        var base = Substring(stem)
        while !base.isEmpty, base.utf8.count + numbered.utf8.count + ext.utf8.count > 255 { base = base.dropLast() }
        return String(base) + numbered + ext
    }
}
