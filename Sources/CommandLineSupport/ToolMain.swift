import DNSSD
import Glibc

/// The life of a command-line tool: parse, print help or usage errors, run, map errors to
/// exit codes, exit.
public enum ToolMain {
    /// Runs a tool and exits the process.
    ///
    /// `--help`, `--version`, `--generate-completion-script <shell>` and `--generate-manual`
    /// print to stdout and exit 0. A `UsageError` prints `Error: …`,
    /// the usage line and a pointer to `--help` on stderr and exits 64. Errors from `body`
    /// print `<tool>: error: …` and exit with `exitCode(for:)`. Every exit flushes `Console`
    /// first. SIGPIPE is ignored, so a closed stdout is an error `Console` handles (by default
    /// the tool goes on and stops printing results), not a silent death.
    ///
    /// It runs on its caller's executor (`nonisolated(nonsending)`): from a tool's `main`, the
    /// main thread. So `--help`, `--version` and usage errors are answered before Swift's
    /// cooperative pool starts a thread (it started 4 for `--help`: in a Swift stand-in ~0.9 ms
    /// of CPU, and more wall time while they wait for a CPU on a loaded machine;
    /// docs/BENCHMARKS.md, row 10); only `body` runs on the pool.
    /// - Parameters:
    ///   - validate: turns parsed arguments into the tool's options, or throws `UsageError`.
    ///   - json: whether the options ask for JSON (`--json`): then the error that ends the tool
    ///     is also an `error` event on stdout (`message`, `exit_code`), so a script reading
    ///     the events learns why they stopped.
    ///   - body: the tool's work; returns the exit code.
    nonisolated(nonsending) public static func run<Options: Sendable>(
        _ spec: CommandSpec,
        arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        validate: (ParsedCommandLine) throws(UsageError) -> Options,
        json: @Sendable (Options) -> Bool = { _ in false },
        body: @Sendable (Options) async throws -> ExitCode
    ) async -> Never {
        setenv("AVAHI_COMPAT_NOWARN", "1", 1)
        signal(SIGPIPE, SIG_IGN)
        let options: Options
        do throws(UsageError) {
            switch try ParsedCommandLine.parse(arguments, spec: spec) {
            case .help: Console.raw(spec.helpText); exit(.success)
            case .version: Console.out("\(spec.name) \(spec.version)"); exit(.success)
            case .completionScript(let shell): Console.raw(spec.completionScript(for: shell)); exit(.success)
            case .manualPage: Console.raw(spec.manualPage(date: ManualDate.current)); exit(.success)
            case .run(let parsed): options = try validate(parsed)
            }
        } catch {
            Console.raw("""
                Error: \(error.message)
                Usage: \(spec.usageLine)
                  See '\(spec.name) --help' for more information.

                """, toStandardError: true)
            exit(.usage)
        }
        do {
            exit(try await body(options))
        } catch {
            let text = message(for: error)
            let code = exitCode(for: error)
            if json(options) {
                EventOutput(json: true).emit("error", text: text, [("message", .string(text)), ("exit_code", .integer(Int(code.rawValue)))])
            }
            Console.error(text)
            exit(code)
        }
    }

    /// Writes out what `Console` holds (see `Console.flush`), then exits with `code`.
    public static func exit(_ code: ExitCode) -> Never {
        Console.flush()
        Glibc.exit(code.rawValue)
    }

    /// The exit code for an error: sysexits values, e.g. 69 when avahi-daemon is unreachable.
    public static func exitCode(for error: any Error) -> ExitCode {
        switch error {
        case let failure as ToolFailure: return failure.exitCode
        case is UsageError: return .usage
        case let error as DNSSDError:
            switch error.code {
            case .busUnreachable, .daemonUnreachable, .refused, .unsupported, .timedOut: return .unavailable
            case .noSuchName: return .noHost
            case .nameConflict: return .cannotCreate
            case .internalError: return .software
            default: return .unavailable
            }
        default: return .software
        }
    }

    static func message(for error: any Error) -> String {
        (error as? CustomStringConvertible)?.description ?? "\(error)"
    }
}
