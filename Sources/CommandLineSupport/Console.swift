import Dispatch
import Glibc

/// Writes whole lines to stdout (results) and stderr (diagnostics) from any thread, escaped
/// for the terminal and never blocking the caller.
///
/// Everything passes through `TerminalSafe.escape`, so no caller can print a peer's control
/// characters by mistake; only the newline Console adds and the progress line's own control
/// sequences reach the terminal raw. Each stream has a writer queue and a buffer of
/// `bufferCapacity` bytes: a stalled reader (a pipe nobody reads) costs at most that much
/// memory, never a blocked thread; lines that do not fit are dropped and counted, and the
/// count is printed on stderr once the stream is written out again.
///
/// On a terminal, stderr may show a status line (`progress`): every line printed, on stdout or
/// stderr, takes it down, appears above it, and draws it again. When stdout and stderr are
/// both terminals, stdout's lines are written by stderr's writer (still to stdout), so that
/// they keep their order with the status line.
///
/// - Important: Call `flush(stallTimeout:)` before exiting (`ToolMain` does), or the last
///   lines may be lost.
public enum Console {
    /// Bytes each stream buffers at most while its reader is slow: 4 MiB.
    public static let bufferCapacity = 4 * 1024 * 1024

    static let standardOutput: OutputStream = {
        let stream = OutputStream(descriptor: STDOUT_FILENO, name: "standard output", capacity: bufferCapacity)
        stream.sendDropNotes { note in Console.note(note) }
        stream.onClose { reason in Console.note("standard output was closed: \(reason); results are no longer printed") }
        return stream
    }()
    static let standardError = OutputStream(descriptor: STDERR_FILENO, name: "standard error", capacity: bufferCapacity)

    /// Whether stdout and stderr are both terminals (see above).
    static let sharedTerminal = isatty(STDOUT_FILENO) == 1 && isatty(STDERR_FILENO) == 1

    /// Whether stderr is a terminal: a progress bar is drawn only then.
    public static let standardErrorIsTerminal = isatty(STDERR_FILENO) == 1

    /// Prints a result line on stdout.
    public static func out(_ line: String) {
        let text = TerminalSafe.escape(line) + "\n"
        guard sharedTerminal else { return standardOutput.write(text) }
        // A hung-up terminal closed stdout (see `whenStandardOutputCloses`): stop printing.
        guard !standardOutput.isClosed else { return }
        standardError.write(text, to: STDOUT_FILENO)
    }

    /// Prints a diagnostic line on stderr, prefixed with the tool's name.
    public static func note(_ line: String) { standardError.write("\(toolName): \(TerminalSafe.escape(line))\n") }

    /// Prints `<tool>: error: <message>` on stderr.
    public static func error(_ message: String) { standardError.write("\(toolName): error: \(TerminalSafe.escape(message))\n") }

    /// Writes text of several lines as it is, but escaped line by line (e.g. help on stdout,
    /// usage on stderr).
    public static func raw(_ text: String, toStandardError: Bool = false) {
        let escaped = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalSafe.escape(String($0)) }.joined(separator: "\n")
        (toStandardError ? standardError : standardOutput).write(escaped)
    }

    /// Shows `text` (escaped) as stderr's status line, below everything printed, e.g. a
    /// progress bar. Keep it one line narrower than `terminalWidth`. Only the latest text is
    /// drawn when the terminal is slow.
    public static func progress(_ text: String) { standardError.setStatus(TerminalSafe.escape(text)) }

    /// Removes the status line `progress` drew.
    public static func clearProgress() { standardError.setStatus(nil) }

    /// The width of the terminal on stderr in columns (`TIOCGWINSZ`), or 80 when stderr is not
    /// a terminal or does not say.
    public static var terminalWidth: Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Runs `handler` once when stdout is closed by its reader (e.g. `svc-browse | head -1`
    /// after `head` exits), even while nothing is being written, instead of printing a note.
    /// - Important: Watches stdout with `poll(2)` on a thread of its own from then on.
    public static func whenStandardOutputCloses(_ handler: @escaping @Sendable () -> Void) {
        standardOutput.onClose { _ in handler() }
        DispatchQueue(label: "svc.output.watch").async {
            // No events asked for: poll reports only POLLERR (a pipe whose reader is gone)
            // and POLLHUP (a hung-up terminal or socket); files and /dev/null never wake it.
            var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            while poll(&watched, 1, -1) < 0 && errno == EINTR {}
            if watched.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                standardOutput.close(reason: "its reader is gone")
            }
        }
    }

    /// Waits until stdout and then stderr have written everything queued. A stream that
    /// writes nothing for `stallTimeout` is given up on, so exiting never hangs on a reader
    /// that stopped reading. The status line is taken down first, for good.
    public static func flush(stallTimeout: Duration = .seconds(5)) {
        standardError.endStatus() // the shell's prompt goes where the status line was
        for stream in [standardOutput, standardError] {
            var lastProgress = ContinuousClock.now
            var lastCount = stream.bytesWritten
            while !stream.isIdle {
                let count = stream.bytesWritten
                if count != lastCount {
                    lastCount = count
                    lastProgress = .now
                } else if ContinuousClock.now - lastProgress > stallTimeout {
                    break
                }
                usleep(1000)
            }
        }
    }

    /// The program's name, as it appears in diagnostics.
    public static var toolName: String {
        let path = CommandLine.arguments.first ?? "svc"
        return String(path.split(separator: "/").last ?? Substring(path))
    }
}

/// The current UTC time as ISO 8601 with milliseconds, e.g. `2026-11-29T16:40:00.123Z`.
public func timestampNow() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return timestamp(now)
}

/// A moment given in milliseconds since 1970 as `timestampNow` writes it.
public func timestamp(unixMilliseconds: UInt64) -> String {
    timestamp(timespec(tv_sec: time_t(clamping: unixMilliseconds / 1000), tv_nsec: Int(unixMilliseconds % 1000) * 1_000_000))
}

private func timestamp(_ now: timespec) -> String {
    var parts = tm()
    var seconds = now.tv_sec
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
        + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
}
