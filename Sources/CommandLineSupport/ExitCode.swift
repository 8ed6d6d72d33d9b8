/// Process exit codes, from BSD's sysexits.h.
public struct ExitCode: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitCode(0)
    /// A failure with no more specific code (e.g. the peer closed the connection early).
    public static let failure = ExitCode(1)
    /// EX_USAGE: the command line was wrong.
    public static let usage = ExitCode(64)
    /// EX_DATAERR: input data was wrong.
    public static let dataError = ExitCode(65)
    /// EX_NOHOST: the service name was not found.
    public static let noHost = ExitCode(68)
    /// EX_UNAVAILABLE: avahi-daemon or D-Bus cannot be reached, or the service refused.
    public static let unavailable = ExitCode(69)
    /// EX_SOFTWARE: an internal error.
    public static let software = ExitCode(70)
    /// EX_CANTCREAT: the service could not be created under its name (taken, `--conflict fail`).
    public static let cannotCreate = ExitCode(73)
    /// EX_OSERR: a system call failed (e.g. no free port).
    public static let osError = ExitCode(71)
    /// EX_IOERR: reading or writing a connection failed.
    public static let ioError = ExitCode(74)
    /// EX_TEMPFAIL: a timeout; trying again later may work.
    public static let temporaryFailure = ExitCode(75)

    /// 128 + SIGINT: the user interrupted the tool (Ctrl-C), as shells report it.
    public static let interrupted = ExitCode(130)

    public var description: String { String(rawValue) }
}

/// An error that ends a tool with a given exit code. `message` is printed as
/// `<tool>: error: <message>`.
public struct ToolFailure: Error, Sendable, CustomStringConvertible {
    public let exitCode: ExitCode
    public let message: String
    public init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }
    public var description: String { message }
}
