/// A manual page being written in roff with the man macros: escaped text, sections, tagged
/// paragraphs and preformatted blocks, with no blank lines or trailing spaces (which
/// `groff -ww` and `mandoc -Tlint` report).
struct Roff {
    private(set) var text = ""
    /// Whether the last line was `.SH`, where a `.PP` would be redundant (mandoc says so).
    private var atSectionStart = false

    /// Text safe on a roff text line: a backslash is `\e`, a hyphen `\-` (so options stay
    /// ASCII when copied), and a leading `.` or `'` is not read as a request.
    static func escape(_ line: String) -> String {
        var result = ""
        for character in line {
            switch character {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            default: result.append(character)
            }
        }
        if result.first == "." || result.first == "'" { result = "\\&" + result }
        return result
    }

    /// `\fB--type\fR \fItype\fR`, with `-h, ` first when `short`.
    static func optionLabel(_ option: CommandSpec.Option, short: Bool) -> String {
        var names = ["\\fB\\-\\-" + escape(option.long) + "\\fR"]
        if short, let letter = option.short { names.insert("\\fB\\-" + escape(String(letter)) + "\\fR", at: 0) }
        let value = option.valueName.map { " \\fI" + escape($0) + "\\fR" } ?? ""
        return names.joined(separator: ", ") + value
    }

    /// A line as given (already escaped).
    mutating func line(_ line: String) {
        text += line + "\n"
        atSectionStart = line.hasPrefix(".SH ")
    }

    /// `.PP`, unless a section has just begun.
    private mutating func startParagraph() {
        if !atSectionStart { line(".PP") }
    }

    mutating func macro(_ name: String, _ arguments: [String]) {
        line("." + name + arguments.map { " \"" + Self.escape($0).replacing("\"", with: "\\(dq") + "\"" }.joined())
    }

    mutating func section(_ title: String) { line(".SH " + Self.escape(title).replacing("\"", with: "\\(dq")) }

    /// A filled paragraph; its lines are escaped.
    mutating func paragraph(_ paragraph: String) {
        startParagraph()
        for part in paragraph.split(separator: "\n") { line(Self.escape(part.trimmingSpaces)) }
    }

    /// A tagged paragraph: `tag` (already escaped) above an indented, filled `help`.
    mutating func item(_ tag: String, _ help: String) {
        line(".TP")
        line(tag)
        for part in help.split(separator: "\n") { line(Self.escape(part.trimmingSpaces)) }
    }

    /// Paragraphs of a discussion section: lines at the left margin are filled text; a run of
    /// indented lines is a list when each line is `  TERM  text` or continues the one above
    /// (deeper indented), and is kept as written otherwise (examples, output formats).
    mutating func body(_ paragraphs: [[String]]) {
        for paragraph in paragraphs {
            var index = 0
            while index < paragraph.count {
                let indented = paragraph[index].first == " "
                let run = paragraph[index...].prefix { ($0.first == " ") == indented }
                index += run.count
                if !indented {
                    self.paragraph(run.joined(separator: "\n"))
                } else if let items = Self.listItems(Array(run)) {
                    for (term, help) in items { item("\\fB" + Self.escape(term) + "\\fR", help) }
                } else {
                    let margin = run.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                    startParagraph()
                    line(".RS 4")
                    line(".nf")
                    for row in run { line(Self.escape(String(row.dropFirst(margin)))) }
                    line(".fi")
                    line(".RE")
                }
            }
        }
    }

    /// `  64   bad arguments` rows with deeper-indented continuations, as (term, text); nil when
    /// the lines are not such a list.
    static func listItems(_ lines: [String]) -> [(String, String)]? {
        var items: [(String, String)] = []
        let margin = lines.first.map { $0.prefix { $0 == " " }.count } ?? 0
        for line in lines {
            let indent = line.prefix { $0 == " " }.count
            let rest = line.dropFirst(indent)
            if indent == margin {
                guard let gap = rest.firstRange(of: "  ") else { return nil }
                let term = rest[..<gap.lowerBound]
                guard !term.contains(" ") else { return nil }
                items.append((String(term), rest[gap.upperBound...].trimmingSpaces))
            } else if indent > margin, let last = items.popLast() {
                items.append((last.0, last.1 + " " + rest.trimmingSpaces))
            } else {
                return nil
            }
        }
        return items.isEmpty ? nil : items
    }
}

extension StringProtocol {
    /// Without spaces at either end.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
