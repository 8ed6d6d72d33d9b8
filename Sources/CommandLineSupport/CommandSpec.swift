/// What a command accepts: enough to parse its arguments and print `--help`.
public struct CommandSpec: Sendable {
    public struct Option: Sendable {
        public let long: String
        public let short: Character?
        /// nil for a flag; otherwise the placeholder shown in help, e.g. `name`.
        public let valueName: String?
        public let help: String
        public let isRepeatable: Bool
        /// What a shell may offer as this option's value; nil: nothing (any text).
        public let completion: ValueCompletion?
        /// The value may be left out (`--room-code` alone): it is then the next argument only
        /// when that does not start with `-`, and the empty string when there is none.
        public let isValueOptional: Bool

        /// - Parameter completion: the values a shell completion offers (`.values`, `.file`,
        ///   `.directory`); only for an option that takes a value.
        public init(_ long: String, short: Character? = nil, value valueName: String? = nil, repeatable: Bool = false,
                    optionalValue: Bool = false, completion: ValueCompletion? = nil, help: String) {
            self.long = long
            self.short = short
            self.valueName = valueName
            self.help = help
            self.isRepeatable = repeatable
            self.completion = valueName == nil ? nil : completion
            self.isValueOptional = optionalValue && valueName != nil
        }

        var label: String {
            let names = (short.map { "-\($0), " } ?? "") + "--\(long)"
            return valueName.map { isValueOptional ? "\(names) [<\($0)>]" : "\(names) <\($0)>" } ?? names
        }
        var usage: String {
            let text = valueName.map { isValueOptional ? "--\(long) [<\($0)>]" : "--\(long) <\($0)>" } ?? "--\(long)"
            return isRepeatable ? "[\(text) ...]" : "[\(text)]"
        }
    }

    public struct Argument: Sendable {
        public let name: String
        public let help: String
        public init(_ name: String, help: String) {
            self.name = name
            self.help = help
        }
    }

    public let name: String
    public let version: String
    public let overview: String
    public let arguments: [Argument]
    public let options: [Option]
    /// Paragraphs printed after the options, e.g. examples and exit codes. The manual page
    /// takes a paragraph that starts with `WORD:` (`OUTPUT:`, `EXIT STATUS ...:`) as a section.
    public let discussion: String?
    /// Files the command reads or writes, for the manual page's FILES section.
    public let files: [Entry]
    /// Environment variables the command reads, for the manual page's ENVIRONMENT section.
    public let environment: [Entry]

    /// A file or an environment variable, and what the command does with it.
    public struct Entry: Sendable {
        public let name: String
        public let help: String
        public init(_ name: String, help: String) {
            self.name = name
            self.help = help
        }
    }

    /// The options every command has, after its own: `--generate-completion-script <shell>`,
    /// `--generate-manual`, `--version` and `--help`. They end the command line (see
    /// `ParsedCommandLine.Outcome`) and are left out of the usage line.
    public static let standardOptions = [
        Option("generate-completion-script", value: "shell", completion: .values(CompletionShell.allCases.map(\.rawValue)),
               help: "Print a completion script for bash, zsh or fish and exit."),
        Option("generate-manual", help: "Print the manual page (roff, for man -l) and exit."),
        Option("version", help: "Show the version."),
        Option("help", short: "h", help: "Show help information."),
    ]

    public init(name: String, version: String, overview: String, arguments: [Argument] = [], options: [Option], discussion: String? = nil,
                files: [Entry] = [], environment: [Entry] = []) {
        self.name = name
        self.version = version
        self.overview = overview
        self.arguments = arguments
        self.options = options + Self.standardOptions
        self.discussion = discussion
        self.files = files
        self.environment = environment
    }

    /// `USAGE: svc-connect <name> [--type <type>] ...`
    public var usageLine: String {
        let standard = Set(Self.standardOptions.map(\.long))
        let shown = options.filter { !standard.contains($0.long) }
        return ([name] + arguments.map { "<\($0.name)>" } + shown.map(\.usage)).joined(separator: " ")
    }

    /// The full `--help` text in swift-argument-parser's layout.
    public var helpText: String {
        var lines = ["OVERVIEW: \(overview)", "", "USAGE: \(usageLine)", ""]
        func row(_ label: String, _ help: String) {
            let indent = String(repeating: " ", count: 26)
            let helpLines = help.split(separator: "\n", omittingEmptySubsequences: false)
            if label.count <= 22 {
                lines.append("  " + label + String(repeating: " ", count: 24 - label.count) + helpLines[0])
            } else {
                lines.append("  " + label)
                lines.append(indent + helpLines[0])
            }
            lines += helpLines.dropFirst().map { indent + $0 }
        }
        if !arguments.isEmpty {
            lines.append("ARGUMENTS:")
            for argument in arguments { row("<\(argument.name)>", argument.help) }
            lines.append("")
        }
        lines.append("OPTIONS:")
        for option in options { row(option.label, option.help) }
        if let discussion { lines += ["", discussion] }
        return lines.joined(separator: "\n") + "\n"
    }
}
