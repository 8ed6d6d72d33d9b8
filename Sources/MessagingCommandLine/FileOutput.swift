import CommandLineSupport
import Glibc
import Messaging
import Synchronization
import TransportCore

/// How svc-publish and svc-connect print file transfers, and the progress bar they draw on
/// a terminal.
public enum FileOutput {
    public static func print(_ event: FileTransfers.Event, peer: String, _ output: EventOutput) {
        switch event {
        case .receiving(let name, let size, let resumingAt):
            output.emit("file-receiving", text: "receiving \"\(name)\" from \(peer) (\(counted(size, "byte"))\(resumingAt > 0 ? ", resuming at \(resumingAt)" : ""))",
                        [("from", .string(peer)), ("name", .string(name)), ("size", .integer(Int(clamping: size))), ("resumed_from", .integer(Int(clamping: resumingAt)))])
        case .stored(let file):
            output.emit("file-stored", text: "stored \"\(file.storedAs)\" from \(peer) (\(counted(file.size, "byte")), sha256 \(hexString(file.digest)), in \(file.path))",
                        [("from", .string(peer)), ("name", .string(file.storedAs)), ("path", .string(file.path)), ("size", .integer(Int(clamping: file.size))),
                         ("resumed_from", .integer(Int(clamping: file.startOffset))), ("sha256", .string(hexString(file.digest)))])
        case .receiveFailed(let name, let reason):
            output.emit("file-failed", text: "receiving \"\(name)\" from \(peer) failed: \(reason)",
                        [("from", .string(peer)), ("name", .string(name)), ("reason", .string(reason))])
        case .progress(let name, let done, let total):
            ProgressBar.shared.show(name: name, done: done, total: total)
        }
    }

    /// The outcome of a file we sent: success only once the receiver confirmed the checksum.
    public static func printSent(_ result: Result<FileTransfers.SentFile, FileError>, peer: String, _ output: EventOutput) {
        ProgressBar.shared.clear()
        switch result {
        case .success(let file):
            output.emit("file-sent", text: "sent \"\(file.path)\" to \(peer) as \"\(file.storedAs)\" (\(counted(file.size, "byte")), \(file.bytesTransferred) transferred, sha256 \(hexString(file.digest)), verified)",
                        [("to", .string(peer)), ("path", .string(file.path)), ("stored_as", .string(file.storedAs)), ("size", .integer(Int(clamping: file.size))),
                         ("bytes_transferred", .integer(Int(clamping: file.bytesTransferred))), ("sha256", .string(hexString(file.digest)))])
        case .failure(let error):
            Console.error(error.message)
        }
    }
}

/// One line on stderr redrawn in place, only when stderr is a terminal.
public final class ProgressBar: Sendable {
    public static let shared = ProgressBar()
    private let enabled = isatty(STDERR_FILENO) == 1
    /// Whether a bar is on screen now.
    private let shown = Mutex(false)

    public func show(name: String, done: UInt64, total: UInt64) {
        guard enabled else { return }
        let fraction = total == 0 ? 1 : min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let label = String(name.split(separator: "/").last ?? "")
        Console.progress("\(label) [\(bar)] \(Int(fraction * 100))% \(done / 1_000_000)/\(total / 1_000_000) MB")
        shown.withLock { $0 = true }
    }

    /// Removes the bar, if one is shown.
    public func clear() {
        guard enabled, shown.withLock({ $0 }) else { return }
        Console.clearProgress()
        shown.withLock { $0 = false }
    }
}
