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
        guard exists(name) else { return name }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        var number = 2
        while true {
            var base = Substring(stem)
            let suffix = " (\(number))" + ext
            while base.utf8.count + suffix.utf8.count > 255 { base = base.dropLast() }
            let candidate = String(base) + suffix
            if !exists(candidate) { return candidate }
            number += 1
        }
    }
}
