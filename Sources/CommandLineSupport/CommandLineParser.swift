/// A bad command line. `message` is printed after `Error: `, followed by the usage.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Arguments split by a `CommandSpec`, before any tool-specific validation.
public struct ParsedCommandLine: Sendable, Hashable {
    public private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Every value given for a repeatable option, in order.
    public func values(_ long: String) -> [String] { values[long] ?? [] }
    /// The value of an option, if given.
    public func value(_ long: String) -> String? { values[long]?.last }
    /// Whether a flag was given.
    public func flag(_ long: String) -> Bool { flags.contains(long) }

    /// What the command line asks for.
    public enum Outcome: Sendable, Hashable {
        case run(ParsedCommandLine)
        case help
        case version
        /// `--generate-completion-script <shell>`: print the completion script for it.
        case completionScript(CompletionShell)
        /// `--generate-manual`: print the manual page.
        case manualPage
    }

    /// Parses `arguments` (without the program name): `--name value`, `--name=value`, `-h`,
    /// and `--` to end options.
    /// - Throws: `UsageError` for unknown options, missing or repeated values and a wrong
    ///   number of arguments.
    public static func parse(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> Outcome {
        var parsed = ParsedCommandLine()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            var name: Substring
            var inlineValue: String?
            let option: CommandSpec.Option?
            if argument.hasPrefix("--") {
                name = argument.dropFirst(2)
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = name[..<equals]
                }
                option = spec.options.first { $0.long == name }
            } else {
                guard argument.count == 2 else { throw UsageError("Unknown option '\(argument)'") }
                option = spec.options.first { $0.short == argument.last }
            }
            guard let option else { throw UsageError("Unknown option '\(argument)'") }
            if option.long == "help" { return .help }
            if option.long == "version" { return .version }
            if option.long == "generate-manual" { return .manualPage }
            guard option.valueName != nil else {
                guard inlineValue == nil else { throw UsageError("The flag '--\(option.long)' does not take a value") }
                parsed.flags.insert(option.long)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if option.isValueOptional, index >= arguments.count || arguments[index].hasPrefix("-") {
                value = ""
            } else {
                guard index < arguments.count else { throw UsageError("Missing value for '\(option.label)'") }
                value = arguments[index]
                index += 1
            }
            if option.long == "generate-completion-script" {
                guard let shell = CompletionShell(rawValue: value) else {
                    let shells = CompletionShell.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                    throw UsageError("--generate-completion-script takes one of \(shells), not '\(value)'")
                }
                return .completionScript(shell)
            }
            if !option.isRepeatable, parsed.values[option.long] != nil {
                throw UsageError("The option '--\(option.long)' was given more than once")
            }
            parsed.values[option.long, default: []].append(value)
        }
        // Help and version win even after other mistakes, so check positionals last.
        if parsed.positionals.count < spec.arguments.count {
            throw UsageError("Missing expected argument '<\(spec.arguments[parsed.positionals.count].name)>'")
        }
        if parsed.positionals.count > spec.arguments.count {
            throw UsageError("Unexpected argument '\(parsed.positionals[spec.arguments.count])'")
        }
        return .run(parsed)
    }
}
