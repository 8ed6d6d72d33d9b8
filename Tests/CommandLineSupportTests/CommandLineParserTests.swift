import CommandLineSupport
import XCTest

final class CommandLineParserTests: XCTestCase {
    let spec = CommandSpec(
        name: "tool", version: "1.0", overview: "Does things.",
        arguments: [.init("name", help: "The name.")],
        options: [
            .init("type", value: "type", help: "The type."),
            .init("txt", value: "key=value", repeatable: true, help: "An item."),
            .init("json", help: "JSON output."),
            .init("a-very-long-option-name", value: "value", help: "Wraps onto\ntwo lines."),
        ])

    func parsed(_ arguments: [String]) throws -> ParsedCommandLine {
        guard case .run(let parsed) = try ParsedCommandLine.parse(arguments, spec: spec) else {
            throw UsageError("expected a run")
        }
        return parsed
    }

    func message(_ arguments: [String]) -> String? {
        do {
            _ = try ParsedCommandLine.parse(arguments, spec: spec)
            return nil
        } catch {
            return error.message
        }
    }

    func testOptionsFlagsAndArguments() throws {
        let result = try parsed(["--type", "_x._tcp", "n", "--txt=a=1", "--txt", "b", "--json"])
        XCTAssertEqual(result.positionals, ["n"])
        XCTAssertEqual(result.value("type"), "_x._tcp")
        XCTAssertEqual(result.values("txt"), ["a=1", "b"])
        XCTAssertTrue(result.flag("json"))
        XCTAssertFalse(result.flag("other"))
    }

    func testAnOptionalValueMayBeLeftOut() throws {
        let spec = CommandSpec(name: "tool", version: "1.0", overview: "Does things.",
                               options: [.init("code", value: "code", optionalValue: true, help: "A code."), .init("json", help: "JSON.")])
        func code(_ arguments: [String]) throws -> String? {
            guard case .run(let parsed) = try ParsedCommandLine.parse(arguments, spec: spec) else { throw UsageError("expected a run") }
            return parsed.value("code")
        }
        XCTAssertEqual(try code(["--code"]), "")
        XCTAssertEqual(try code(["--code", "--json"]), "")
        XCTAssertEqual(try code(["--code", "1234"]), "1234")
        XCTAssertEqual(try code(["--code=12 34"]), "12 34")
        XCTAssertNil(try code(["--json"]))
        XCTAssertTrue(spec.usageLine.contains("[--code [<code>]]"), spec.usageLine)
    }

    func testDoubleDashEndsOptions() throws {
        XCTAssertEqual(try parsed(["--", "--json"]).positionals, ["--json"])
        XCTAssertEqual(try parsed(["-"]).positionals, ["-"])
    }

    func testHelpAndVersionWinOverOtherMistakes() throws {
        XCTAssertEqual(try ParsedCommandLine.parse(["--json", "-h"], spec: spec), .help)
        XCTAssertEqual(try ParsedCommandLine.parse(["extra", "args", "--help"], spec: spec), .help)
        XCTAssertEqual(try ParsedCommandLine.parse(["--version"], spec: spec), .version)
    }

    func testGeneratorOptionsEndTheCommandLineLikeHelp() throws {
        XCTAssertEqual(try ParsedCommandLine.parse(["--generate-manual"], spec: spec), .manualPage)
        XCTAssertEqual(try ParsedCommandLine.parse(["--generate-completion-script", "zsh"], spec: spec), .completionScript(.zsh))
        XCTAssertEqual(try ParsedCommandLine.parse(["--generate-completion-script=fish"], spec: spec), .completionScript(.fish))
        XCTAssertEqual(message(["--generate-completion-script", "tcsh"]), "--generate-completion-script takes one of 'bash', 'zsh', 'fish', not 'tcsh'")
        XCTAssertEqual(message(["--generate-completion-script"]), "Missing value for '--generate-completion-script <shell>'")
    }

    func testUsageErrorsSayWhatIsWrong() {
        XCTAssertEqual(message(["n", "--bogus"]), "Unknown option '--bogus'")
        XCTAssertEqual(message(["n", "-x"]), "Unknown option '-x'")
        XCTAssertEqual(message(["n", "--type"]), "Missing value for '--type <type>'")
        XCTAssertEqual(message(["n", "--type", "a", "--type", "b"]), "The option '--type' was given more than once")
        XCTAssertEqual(message(["n", "--json=yes"]), "The flag '--json' does not take a value")
        XCTAssertEqual(message([]), "Missing expected argument '<name>'")
        XCTAssertEqual(message(["n", "m"]), "Unexpected argument 'm'")
    }

    func testHelpLayoutFollowsArgumentParser() {
        XCTAssertEqual(spec.helpText, """
            OVERVIEW: Does things.

            USAGE: tool <name> [--type <type>] [--txt <key=value> ...] [--json] [--a-very-long-option-name <value>]

            ARGUMENTS:
              <name>                  The name.

            OPTIONS:
              --type <type>           The type.
              --txt <key=value>       An item.
              --json                  JSON output.
              --a-very-long-option-name <value>
                                      Wraps onto
                                      two lines.
              --generate-completion-script <shell>
                                      Print a completion script for bash, zsh or fish and exit.
              --generate-manual       Print the manual page (roff, for man -l) and exit.
              --version               Show the version.
              -h, --help              Show help information.

            """)
    }

    func testValueParsers() throws {
        XCTAssertEqual(try parseSeconds("2.5", option: "timeout"), .milliseconds(2500))
        XCTAssertEqual(try parsePort("0", option: "port"), 0)
        XCTAssertEqual(try parsePort("65535", option: "port"), 65535)
        for bad in ["0", "-1", "abc", "nan", "inf", "100000"] {
            XCTAssertThrowsError(try parseSeconds(bad, option: "timeout"), bad)
        }
        XCTAssertThrowsError(try parsePort("65536", option: "port")) { error in
            XCTAssertEqual((error as! UsageError).message, "--port takes a port from 0 to 65535 (0: any free port), not '65536'")
        }
    }
}
