import Glibc

/// Runs a program found at a fixed path and collects its output, with a deadline and a bound:
/// the firewall tools' output is untrusted text, and a tool that hangs must not hold up the
/// caller.
struct BoundedCommand {
    /// How it ended.
    enum Outcome: Equatable {
        /// It exited (`status` from `waitpid`) with this output.
        case exited(status: Int32, output: [UInt8], errorOutput: [UInt8])
        /// It wrote more than the bound, or ran past the deadline, and was killed.
        case killed(String)
        /// It could not be started.
        case notStarted(String)
    }

    let path: String
    let arguments: [String]
    let timeout: Duration
    let outputLimit: Int
    /// Standard error kept at most (the first line is shown to people).
    static let errorLimit = 4096

    func run() -> Outcome {
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
        let envp: [UnsafeMutablePointer<CChar>?] = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"].map { (word: String) in strdup(word) } + [nil]
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

    static func errorText(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }
}
