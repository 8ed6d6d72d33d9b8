import Glibc

/// A manual page of the svc tools: the tool's name and its section (1: commands, 8: system
/// administration).
public struct ManualPageReference: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let section: Int
    public init(_ name: String, section: Int) {
        self.name = name
        self.section = section
    }
    /// `svc-browse(1)`
    public var description: String { "\(name)(\(section))" }
}

extension CommandSpec {
    /// Every svc tool's manual page: each page's SEE ALSO, and each tool's section (a tool not
    /// listed is in section 1).
    public static let toolPages: [ManualPageReference] = [
        ManualPageReference("svc-publish", section: 1),
        ManualPageReference("svc-browse", section: 1),
        ManualPageReference("svc-connect", section: 1),
        ManualPageReference("svc-doctor", section: 8),
    ]

    /// Pages outside svc that every page refers to.
    static let relatedPages = [ManualPageReference("avahi-daemon", section: 8), ManualPageReference("avahi-browse", section: 1)]

    /// The section of this tool's manual page (`toolPages`; 1 when it is not listed).
    public var manualSection: Int { Self.toolPages.first { $0.name == name }?.section ?? 1 }

    /// The manual page in roff (man macros), from the same declarations as `helpText`: NAME,
    /// SYNOPSIS, DESCRIPTION (the overview and the discussion's untitled paragraphs),
    /// ARGUMENTS, OPTIONS, a section for each discussion paragraph that starts with a title
    /// (`OUTPUT:`, `KEYS:`), EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO.
    /// - Parameter date: the page's date, `YYYY-MM-DD` (see `ManualDate`).
    public func manualPage(date: String) -> String {
        var page = Roff()
        page.macro("TH", [name.uppercased(), String(manualSection), date, "svc \(version)", manualSection == 8 ? "System Administration" : "User Commands"])
        page.line(".nh") // option names and placeholders are not hyphenated
        page.section("NAME")
        page.paragraph("\(name) - \(overview)")

        page.section("SYNOPSIS")
        page.line("\\fB" + Roff.escape(name) + "\\fR")
        for argument in arguments { page.line("\\fI" + Roff.escape(argument.name) + "\\fR") }
        let standard = Set(Self.standardOptions.map(\.long))
        for option in options where !standard.contains(option.long) {
            page.line("[" + Roff.optionLabel(option, short: false) + "]" + (option.isRepeatable ? " ..." : ""))
        }

        let sections = ManualDiscussion(discussion ?? "").sections
        page.section("DESCRIPTION")
        page.paragraph(overview)
        for body in sections.filter({ $0.title == nil }).map(\.body) { page.body(body) }

        if !arguments.isEmpty {
            page.section("ARGUMENTS")
            for argument in arguments { page.item("\\fI" + Roff.escape(argument.name) + "\\fR", argument.help) }
        }
        page.section("OPTIONS")
        for option in options { page.item(Roff.optionLabel(option, short: true), option.help) }

        let placedLater: Set = ["EXIT STATUS", "EXAMPLES"]
        for section in sections {
            guard let title = section.title, !placedLater.contains(title) else { continue }
            page.section(title)
            page.body(section.body)
        }
        for section in sections where section.title == "EXIT STATUS" {
            page.section("EXIT STATUS")
            page.body(section.body)
        }
        for (title, entries) in [("ENVIRONMENT", environment), ("FILES", files)] where !entries.isEmpty {
            page.section(title)
            for entry in entries { page.item("\\fI" + Roff.escape(entry.name) + "\\fR", entry.help) }
        }
        for section in sections where section.title == "EXAMPLES" {
            page.section("EXAMPLES")
            page.body(section.body)
        }
        page.section("SEE ALSO")
        let others = Self.toolPages.filter { $0.name != name } + Self.relatedPages
        page.line(others.map { "\\fB\(Roff.escape($0.name))\\fR(\($0.section))" }.joined(separator: ", "))
        return page.text
    }
}

/// The date a manual page carries: `SOURCE_DATE_EPOCH` (reproducible builds) when set, else
/// today, as `YYYY-MM-DD` in UTC.
public enum ManualDate {
    public static var current: String {
        var seconds = time(nil)
        if let raw = getenv("SOURCE_DATE_EPOCH"), let epoch = Int(String(cString: raw)), epoch >= 0 {
            seconds = time_t(clamping: epoch)
        }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(HumanTime.format(parts).prefix(10))
    }
}
