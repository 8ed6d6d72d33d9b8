import Glibc

/// Runs a program found at a fixed path and collects its output, with a deadline and a bound:
/// the output of system tools (nft, iptables-save, dbus-send) is untrusted text, and a tool
/// that hangs must not hold up the caller. No shell is involved; stdin is /dev/null.
///
/// - Important: `run()` blocks the calling thread until the program ends or is killed (at
///   most `timeout`). It kills only the pid it started.
public struct BoundedCommand: Sendable {
    /// How it ended.
    public enum Outcome: Equatable, Sendable {
        /// It exited (`status` from `waitpid`) with this output.
        case exited(status: Int32, output: [UInt8], errorOutput: [UInt8])
        /// It wrote more than the bound, or ran past the deadline, and was killed.
        case killed(String)
        /// It could not be started.
        case notStarted(String)
    }

    /// The program, an absolute path (see `locate(_:)`).
    public let path: String
    /// Its arguments, without the program itself.
    public let arguments: [String]
    /// How long it may run before it is killed.
    public let timeout: Duration
    /// Standard output kept at most; a program that writes more is killed.
    public let outputLimit: Int
    /// Its whole environment, `NAME=value` each (the caller's is not passed on).
    public let environment: [String]
    /// Standard error kept at most (the first line is shown to people); the rest is read and dropped.
    public static let errorLimit = 4096
    /// The environment a program gets unless told otherwise: a fixed PATH and the C locale, so
    /// its messages read the same everywhere.
    public static let defaultEnvironment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]
    /// Where `locate(_:)` looks (not `PATH`: the caller's PATH is not trusted to find system tools).
    public static let systemDirectories = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]

    public init(path: String, arguments: [String], timeout: Duration, outputLimit: Int, environment: [String] = defaultEnvironment) {
        self.path = path
        self.arguments = arguments
        self.timeout = timeout
        self.outputLimit = outputLimit
        self.environment = environment
    }

    /// The path of the system program `tool` (e.g. `nft`, `dbus-send`) in `systemDirectories`,
    /// or nil when it is not installed.
    public static func locate(_ tool: String) -> String? {
        systemDirectories.map { $0 + "/" + tool }.first { access($0, X_OK) == 0 }
    }

    /// Starts the program, collects its output until it exits, and reaps it.
    public func run() -> Outcome {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { return .notStarted("pipe: \(Self.errorText(errno))") }
        guard pipe(&errPipe) == 0 else {
            let code = errno
            close(outPipe[0]); close(outPipe[1])
            return .notStarted("pipe: \(Self.errorText(code))")
        }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { (word: String) in strdup(word) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { (word: String) in strdup(word) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        defer { close(outPipe[0]); close(errPipe[0]) }
        guard spawned == 0 else { return .notStarted("\(path): \(Self.errorText(spawned))") }

        var output: [UInt8] = []
        var errorOutput: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var open = [outPipe[0], errPipe[0]]
        var failure: String?
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty, failure == nil {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { failure = "it did not finish within \(timeout)"; break }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                failure = "poll: \(Self.errorText(errno))"
                break
            }
            for watched in fds where watched.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(watched.fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    open.removeAll { $0 == watched.fd }
                } else if watched.fd == outPipe[0] {
                    output += buffer[..<count]
                    if output.count > outputLimit { failure = "its output passed \(outputLimit >> 20) MiB" }
                } else if errorOutput.count < Self.errorLimit {
                    errorOutput += buffer[..<min(count, Self.errorLimit - errorOutput.count)]
                }
            }
        }
        if let failure {
            kill(pid, SIGKILL) // our own child, by its pid
            Self.reap(pid)
            return .killed(failure)
        }
        return .exited(status: Self.reap(pid), output: output, errorOutput: errorOutput)
    }

    /// Waits for the child; its exit status, or -1 when it did not exit normally.
    @discardableResult
    private static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS are macros: the low 7 bits are the signal, 0 when it exited.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }

    /// `No such file or directory (errno 2)`.
    public static func errorText(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }
}
