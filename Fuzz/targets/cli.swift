// Fuzz target: the command-line parser (CommandLineSupport's CommandSpec and
// CommandLineParser files, which import nothing). NUL bytes split the input into arguments.
// Properties: no crash, and help text renders for the spec.

let spec = CommandSpec(
    name: "fuzz", version: "0", overview: "Fuzzing.",
    arguments: [.init("name", help: "A name.")],
    options: [
        .init("type", value: "type", help: "A value."),
        .init("txt", value: "key=value", repeatable: true, help: "Repeated."),
        .init("json", help: "A flag."),
        .init("a-very-long-option-name", short: "x", value: "value", help: "Wraps\nover lines."),
    ])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandLine(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let arguments = UnsafeBufferPointer(start: start, count: count)
        .split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    if case .run(let parsed)? = try? ParsedCommandLine.parse(arguments, spec: spec) {
        precondition(parsed.positionals.count == 1, "a run needs exactly the one argument")
    }
    precondition(spec.helpText.hasPrefix("OVERVIEW: "))
    return 0
}
