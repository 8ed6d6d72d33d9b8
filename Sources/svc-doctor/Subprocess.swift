import Glibc

/// Runs a helper program (e.g. `dbus-send`) with a deadline and bounded output, without a
/// shell. svc-doctor runs only programs that read state, never ones that change it.
enum Subprocess {
    struct Result {
        /// The exit status, or nil when it was killed at the deadline.
        let status: Int32?
        /// Standard output and standard error together, at most `outputLimit` bytes.
        let output: String
    }

    static let outputLimit = 65536

    /// Runs `arguments[0]` (an absolute path) with the others, stdin from /dev/null.
    /// Kills it (the pid it started, only) when it outlives `timeout`.
    /// - Throws: `FileError` when it cannot be started.
    static func run(_ arguments: [String], timeout: Duration) throws(FileError) -> Result {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw FileError(path: arguments[0], call: "pipe", errno: errno) }
        // Other threads may spawn too: neither end may leak into their children.
        pipeFDs.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(pipeFDs[1])
        guard spawned == 0 else {
            close(pipeFDs[0])
            throw FileError(path: arguments[0], call: "posix_spawn", errno: spawned)
        }
        let readFD = pipeFDs[0]
        defer { close(readFD) }
        let deadline = ContinuousClock.now + timeout
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var timedOut = false
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { timedOut = true; break }
            var watched = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if output.count < outputLimit { output += chunk[..<min(count, outputLimit - output.count)] }
        }
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = !timedOut && status & 0x7F == 0
        return Result(status: exited ? (status >> 8) & 0xFF : nil, output: String(decoding: output, as: UTF8.self))
    }
}
