import CommandLineSupport
import Messaging
import MessagingCore
import Synchronization
import TransportCore

/// How svc-publish and svc-connect print file transfers: a line when one starts and when it
/// ends, and the progress in between (`TransferProgress`).
public enum FileOutput {
    public static func print(_ event: FileTransfers.Event, peer: String, _ output: EventOutput) {
        switch event {
        case .receiving(let name, let size, let resumingAt):
            TransferProgress.shared.started(.receiving, peer: peer, name: name, size: size, resumingAt: resumingAt, output)
            output.emit("file-receiving", text: "receiving \(TerminalSafe.quoted(name)) from \(peer) (\(counted(size, "byte"))\(resumingAt > 0 ? ", resuming at \(resumingAt)" : ""))",
                        [("from", .string(peer)), ("name", .string(name)), ("size", .integer(Int(clamping: size))), ("resumed_from", .integer(Int(clamping: resumingAt)))])
        case .sending(let path, let size, let resumingAt):
            TransferProgress.shared.started(.sending, peer: peer, name: path, size: size, resumingAt: resumingAt, output)
            output.emit("file-sending", text: "sending \(TerminalSafe.quoted(path)) to \(peer) (\(counted(size, "byte"))\(resumingAt > 0 ? ", resuming at \(resumingAt)" : ""))",
                        [("to", .string(peer)), ("path", .string(path)), ("size", .integer(Int(clamping: size))), ("resumed_from", .integer(Int(clamping: resumingAt)))])
        case .stored(let file):
            output.emit("file-stored", text: "stored \(TerminalSafe.quoted(file.storedAs)) from \(peer) (\(counted(file.size, "byte")), sha256 \(hexString(file.digest)), in \(file.path))",
                        [("from", .string(peer)), ("name", .string(file.storedAs)), ("path", .string(file.path)), ("size", .integer(Int(clamping: file.size))),
                         ("resumed_from", .integer(Int(clamping: file.startOffset))), ("sha256", .string(hexString(file.digest)))])
        case .receiveFailed(let name, let reason):
            TransferProgress.shared.finished(.receiving, peer: peer, name: InboxName.sanitized(name))
            output.emit("file-failed", text: "receiving \(TerminalSafe.quoted(name)) from \(peer) failed: \(reason)",
                        [("from", .string(peer)), ("name", .string(name)), ("reason", .string(reason))])
        case .progress(let direction, let name, let done, let total):
            TransferProgress.shared.progressed(direction, peer: peer, name: name, done: done, total: total, output)
        case .relayed(let member, let event):
            print(event, peer: member, output) // passed on by the server; the member sent it or receives it
        }
    }

    /// The outcome of a file we sent: success only once the receiver confirmed the checksum.
    public static func printSent(_ result: Result<FileTransfers.SentFile, FileError>, peer: String, _ output: EventOutput) {
        switch result {
        case .success(let file):
            TransferProgress.shared.finished(.sending, peer: peer, name: file.path)
            output.emit("file-sent", text: "sent \(TerminalSafe.quoted(file.path)) to \(peer) as \(TerminalSafe.quoted(file.storedAs)) (\(counted(file.size, "byte")), \(file.bytesTransferred) transferred, sha256 \(hexString(file.digest)), verified)",
                        [("to", .string(peer)), ("path", .string(file.path)), ("stored_as", .string(file.storedAs)), ("size", .integer(Int(clamping: file.size))),
                         ("bytes_transferred", .integer(Int(clamping: file.bytesTransferred))), ("sha256", .string(hexString(file.digest)))])
        case .failure(let error):
            TransferProgress.shared.finished(.sending, peer: peer, name: nil)
            Console.error(error.message)
        }
    }
}
