/// A command's discussion (`CommandSpec.discussion`) cut into manual-page sections: a
/// paragraph whose first line starts with a title in capitals and a colon (`OUTPUT:`,
/// `EXIT STATUS (the same for ...):`, `KEYS: as ssh's ...`) opens a section; untitled
/// paragraphs belong to the section before them, or to DESCRIPTION before any title.
struct ManualDiscussion {
    struct Section {
        /// nil: the description's own paragraphs.
        var title: String?
        /// Paragraphs, each a list of lines as written (indented lines kept indented).
        var body: [[String]]
    }

    private(set) var sections: [Section] = []

    init(_ discussion: String) {
        let paragraphs = discussion.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.reversed().drop { $0 == " " }.reversed()) }
            .split(whereSeparator: \.isEmpty)
            .map(Array.init)
        for paragraph in paragraphs {
            if let (title, rest) = Self.title(of: paragraph[0]) {
                let lines = (rest.isEmpty ? [] : [rest]) + paragraph.dropFirst()
                sections.append(Section(title: title, body: lines.isEmpty ? [] : [lines]))
            } else if sections.isEmpty {
                sections.append(Section(title: nil, body: [paragraph]))
            } else {
                sections[sections.count - 1].body.append(paragraph)
            }
        }
    }

    /// `EXIT STATUS (the same ...):` → ("EXIT STATUS", "(the same ...)"); nil for a line that
    /// is not a title.
    static func title(of line: String) -> (String, String)? {
        let words = line.prefix { $0 == " " || ($0.isUppercase && $0.isASCII) }
        let title = words.trimming(" ")
        guard title.count >= 4, words.first != " " else { return nil }
        var rest = line.dropFirst(words.count)
        var note = ""
        if rest.first == "(", let close = rest.firstIndex(of: ")") {
            note = String(rest[...close])
            rest = rest[rest.index(after: close)...]
        }
        guard rest.first == ":" else { return nil }
        // `KEYS: as ssh's ...` reads as a sentence of its own: "As ssh's ...".
        var text = rest.dropFirst().trimming(" ")
        if let first = text.first, first.isLowercase { text = first.uppercased() + text.dropFirst() }
        return (title, (note + " " + text).trimming(" "))
    }
}

extension StringProtocol {
    /// Without `characters` at either end.
    fileprivate func trimming(_ characters: String) -> String {
        String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
