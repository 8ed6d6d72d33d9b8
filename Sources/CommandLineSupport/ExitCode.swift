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
    /// EX_NOINPUT: a file to send is missing, unreadable or not a regular file.
    public static let noInput = ExitCode(66)
    /// EX_NOHOST: the service name was not found.
    public static let noHost = ExitCode(68)
    /// EX_UNAVAILABLE: avahi-daemon or D-Bus cannot be reached or did not answer in time.
    public static let unavailable = ExitCode(69)
    /// EX_SOFTWARE: an internal error.
    public static let software = ExitCode(70)
    /// EX_CANTCREAT: the service could not be created under its name (taken, `--conflict fail`).
    public static let cannotCreate = ExitCode(73)
    /// EX_OSERR: a system call failed (e.g. no free port).
    public static let osError = ExitCode(71)
    /// EX_IOERR: reading or writing a connection failed.
    public static let ioError = ExitCode(74)
    /// EX_TEMPFAIL: the service was found but its host did not answer (or did not let us in)
    /// in time; trying again later may work.
    public static let temporaryFailure = ExitCode(75)
    /// EX_PROTOCOL: the server refused us (e.g. the room is full).
    public static let protocolError = ExitCode(76)
    /// EX_NOPERM: the service presented a key other than the one pinned, announced or given
    /// with --fingerprint, or --strict and it is not pinned; nothing was sent.
    public static let untrustedKey = ExitCode(77)
    /// EX_CONFIG: the identity key file or known_peers cannot be used (permissions too open,
    /// not ours, unreadable, not a key).
    public static let configuration = ExitCode(78)
    /// The room-code exchange failed: the code given with --room-code is not the room's (or
    /// something between us and the room relays the connection). Past sysexits' range.
    public static let wrongRoomCode = ExitCode(79)
    /// The room did not let us in: it needs its room code from new members (code-required),
    /// or admits only the keys it lists (not-admitted).
    public static let notAdmitted = ExitCode(80)

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

extension ExitCode {
    /// The exit codes of svc-publish, svc-browse and svc-connect, one meaning each: the end
    /// of every tool's `--help`, and the README's table (a test checks they agree).
    public static let table = """
        EXIT STATUS (the same for svc-publish, svc-browse and svc-connect):
          0    done: input ended (or /quit) and everything was delivered; or stopped by
               SIGINT or SIGTERM (svc-publish, svc-browse), by SIGTERM (svc-connect)
          64   bad arguments
          66   a file to send is missing, unreadable or not a regular file; nothing was sent
          68   no service of that name answered within --timeout
          69   avahi-daemon or D-Bus is unreachable or did not answer in time
          70   an internal error (a bug: please report it)
          71   cannot listen on the port, or cannot use the --inbox directory
          73   the name is taken and --conflict fail was given
          74   something was not delivered, or the connection broke or the room closed
               and was not restored
          75   the service is published but its host does not answer, refuses the
               connection, or does not let us in in time (it may have left without saying
               so), or too many room codes were tried: trying again later may work
          76   the server refused us (e.g. the room is full)
          77   the service presented a key other than the one pinned, announced or given
               (--fingerprint), or --strict and it is not pinned; nothing was sent
          78   the identity key file, known_peers or the members file cannot be used
               (permissions too open, not ours, unreadable, not a key)
          79   the room code did not match: it is not the room's, or something between
               us and the room relays the connection (svc-connect --room-code)
          80   the room did not let us in: it needs its room code (--room-code) or
               admits only the members it lists (--admit known)
          130  svc-connect interrupted by Ctrl-C (SIGINT); what was not delivered is listed;
               svc-publish interrupted before its first registration completed (what it may
               have written is withdrawn, or named if the server does not answer)
          143  svc-publish stopped by SIGTERM before its first registration completed
        """
}
