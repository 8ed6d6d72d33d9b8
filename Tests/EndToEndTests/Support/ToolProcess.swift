import Foundation
import XCTest

/// A tool running as a subprocess: its stdout and stderr collected line by line, its stdin
/// writable, and waits bounded by timeouts.
final class ToolProcess: @unchecked Sendable {
    let process = Process()
    let label: String
    private let stdinPipe = Pipe()
    private let lock = NSCondition()
    private var outLines: [String] = []
    private var errLines: [String] = []
    private var partial: [Bool: Data] = [true: Data(), false: Data()]
    private var openStreams = 2

    /// Starts `executable` with `arguments`.
    init(_ executable: String, _ arguments: [String], label: String? = nil, environment: [String: String]? = nil) throws {
        self.label = label ?? URL(fileURLWithPath: arguments.first(where: { $0.contains("svc-") }) ?? executable).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdinPipe
        // Each pipe is read by a thread of its own with blocking read(2) until end of file.
        // Not Foundation's readabilityHandler: under load its handler once stopped being
        // called with 18 KiB and the end of file waiting in the pipe for 60 s after the tool
        // had exited (HostileServerTests lost svc-connect's last line; swift-corelibs-foundation
        // #3275); and a dispatch source left on a closed, reused descriptor had crashed the
        // test process. The thread holds the read end until it has read the end of file.
        for (pipe, isOut) in [(out, true), (err, false)] {
            let handle = pipe.fileHandleForReading
            let reader = Thread { [weak self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    self?.append(Data(buffer[..<count]), isOut: isOut)
                }
                self?.append(Data(), isOut: isOut)
            }
            reader.name = "ToolProcess.\(isOut ? "stdout" : "stderr")"
            reader.start()
        }
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    private func append(_ data: Data, isOut: Bool) {
        lock.lock()
        defer { lock.broadcast(); lock.unlock() }
        if data.isEmpty {
            openStreams -= 1
            if let rest = partial[isOut], !rest.isEmpty {
                let line = String(decoding: rest, as: UTF8.self)
                if isOut { outLines.append(line) } else { errLines.append(line) }
            }
            partial[isOut] = Data()
            return
        }
        var buffer = partial[isOut]! + data
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
            if isOut { outLines.append(line) } else { errLines.append(line) }
            buffer = Data(buffer[buffer.index(after: newline)...])
        }
        partial[isOut] = buffer
    }

    var stdout: [String] { lock.lock(); defer { lock.unlock() }; return outLines }
    var stderr: [String] { lock.lock(); defer { lock.unlock() }; return errLines }

    /// stdout lines parsed as JSON objects (lines that are not JSON are skipped).
    var jsonEvents: [[String: Any]] {
        stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits until a stdout line satisfies `predicate`; returns it, or nil on timeout.
    @discardableResult
    func waitForLine(timeout: TimeInterval = 10, where predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let line = outLines.first(where: predicate) { return line }
            if openStreams == 0 || !lock.wait(until: deadline) {
                return outLines.first(where: predicate)
            }
        }
    }

    /// Waits for a JSON event on stdout matching `predicate`.
    func waitForEvent(timeout: TimeInterval = 10, where predicate: @escaping ([String: Any]) -> Bool) -> [String: Any]? {
        let line = waitForLine(timeout: timeout) { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
            return predicate(object)
        }
        return line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Writes a line to the tool's stdin.
    func send(_ line: String) {
        stdinPipe.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func closeStdin() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit; returns its status, or nil on timeout (the process is
    /// then killed). Never waits without a bound.
    func waitForExit(timeout: TimeInterval = 10) -> Int32? {
        if let status = waitForStatus(until: Date().addingTimeInterval(timeout)) { return drained(status) }
        kill(process.processIdentifier, SIGKILL)
        _ = waitForStatus(until: Date().addingTimeInterval(5))
        return nil
    }

    /// The exit status if the process exits within `timeout`; nil when it is still running
    /// then (it is left running).
    func exitStatus(within timeout: TimeInterval) -> Int32? {
        waitForStatus(until: Date().addingTimeInterval(timeout)).map(drained)
    }

    /// The exit status once the process has exited: from Foundation, or, when Foundation has
    /// not noticed the exit (seen here: a child left unreaped), from the zombie's
    /// /proc/PID/stat, whose 52nd field is the status as waitpid(2) reports it.
    private func waitForStatus(until deadline: Date) -> Int32? {
        while Date() < deadline {
            if !process.isRunning { return process.terminationStatus }
            if let status = zombieStatus() { return status }
            usleep(10_000)
        }
        return nil
    }

    private func zombieStatus() -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state); field 52 is fields[49].
        guard fields.first == "Z", fields.count >= 50, let raw = Int32(fields[49].trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }

    /// Lets the pipes drain so the last lines are collected, then returns `status`. 5 s: with
    /// 2 s, `svc-publish --help` once read as exit 0 with no output at load 17, its pipes' readers
    /// not yet scheduled. A pipe a child of the tool keeps open costs at most these 5 s.
    private func drained(_ status: Int32) -> Int32 {
        lock.lock()
        let drainDeadline = Date().addingTimeInterval(5)
        while openStreams > 0 && lock.wait(until: drainDeadline) {}
        lock.unlock()
        return status
    }

    /// Waits, at most `timeout`, until stdout and stderr have both ended: for programs whose
    /// helpers may still write after the program itself exits (man's groff and pager pipeline),
    /// which the 2 s drain of `waitForExit` can cut short on a busy machine.
    func waitForOutputToEnd(timeout: TimeInterval) {
        lock.lock()
        let deadline = Date().addingTimeInterval(timeout)
        while openStreams > 0 && lock.wait(until: deadline) {}
        lock.unlock()
    }

    /// Everything the process printed, for failure messages.
    var transcript: String {
        "[\(label) stdout]\n" + stdout.joined(separator: "\n") + "\n[\(label) stderr]\n" + stderr.joined(separator: "\n")
    }
}
