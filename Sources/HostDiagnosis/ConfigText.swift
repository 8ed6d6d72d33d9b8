/// Bounds for text read from configuration files and /proc: a file that is huge or not text
/// costs a bounded amount of work, and one bad line never hides the others.
public enum ConfigText {
    /// Lines after this many are ignored.
    public static let maximumLines = 10_000
    /// Longer lines are skipped (no setting we read is anywhere near this long).
    public static let maximumLineLength = 4096

    /// The lines of `text` (LF or CRLF), numbered from 1, without the ones longer than
    /// `maximumLineLength`, and at most `maximumLines` of them.
    public static func lines(_ text: String) -> [(number: Int, text: Substring)] {
        var result: [(number: Int, text: Substring)] = []
        var number = 0
        // "\r\n" is one Character in Swift, so it is a separator of its own.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            if number > maximumLines { break }
            guard line.utf8.count <= maximumLineLength else { continue }
            result.append((number, line))
        }
        return result
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isBlank($0) }), let end = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return text[start...end]
    }

    /// `key=value` split at the first `=`, both trimmed; nil without `=`.
    static func assignment(_ line: Substring) -> (key: Substring, value: Substring)? {
        guard let equals = line.firstIndex(of: "=") else { return nil }
        return (trimmed(line[..<equals]), trimmed(line[line.index(after: equals)...]))
    }

    /// `[name]` as `name`, or nil when the line is not a section header.
    static func section(_ line: Substring) -> Substring? {
        guard line.hasPrefix("["), line.hasSuffix("]"), line.count >= 2 else { return nil }
        return trimmed(line.dropFirst().dropLast())
    }
}
