/// What a command accepts: enough to parse its arguments and print `--help`.
public struct CommandSpec: Sendable {
    public struct Option: Sendable {
        public let long: String
        public let short: Character?
        /// nil for a flag; otherwise the placeholder shown in help, e.g. `name`.
        public let valueName: String?
        public let help: String
        public let isRepeatable: Bool
        /// The value may be left out (`--room-code` alone): it is then the next argument only
        /// when that does not start with `-`, and the empty string when there is none.
        public let isValueOptional: Bool

        public init(_ long: String, short: Character? = nil, value valueName: String? = nil, repeatable: Bool = false,
                    optionalValue: Bool = false, help: String) {
            self.long = long
            self.short = short
            self.valueName = valueName
            self.help = help
            self.isRepeatable = repeatable
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
    /// Paragraphs printed after the options, e.g. examples and exit codes.
    public let discussion: String?

    public init(name: String, version: String, overview: String, arguments: [Argument] = [], options: [Option], discussion: String? = nil) {
        self.name = name
        self.version = version
        self.overview = overview
        self.arguments = arguments
        self.options = options + [
            Option("version", help: "Show the version."),
            Option("help", short: "h", help: "Show help information."),
        ]
        self.discussion = discussion
    }

    /// `USAGE: svc-connect <name> [--type <type>] ...`
    public var usageLine: String {
        let shown = options.filter { $0.long != "help" && $0.long != "version" }
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
