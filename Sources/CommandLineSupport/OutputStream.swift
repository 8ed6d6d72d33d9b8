import Dispatch
import Glibc
import Synchronization
import TransportCore

/// One of the process's output streams (stdout or stderr), written by a queue of its own so
/// that no caller ever waits for the reader: callers append whole lines to a bounded buffer
/// and return at once; the queue does the blocking `write(2)` calls.
///
/// When the buffer holds `capacity` bytes, further lines are dropped and counted; once the
/// stream has written everything it held, it reports the count (see `dropNote`). When a write
/// fails (the reader closed a pipe: EPIPE), the stream closes: pending and later lines are
/// discarded and `onClose` runs once.
final class OutputStream: Sendable {
    /// The descriptor written to; owned by the process, never closed here.
    let descriptor: Int32
    /// How the stream is named in notes, e.g. `standard output`.
    let name: String
    /// Bytes the buffer holds at most.
    let capacity: Int
    private let queue: DispatchQueue
    /// Everything mutable; the queue takes bytes out under the lock and writes without it.
    private let state = Mutex(State())

    private struct State {
        var pending: [UInt8] = []
        /// True while a drain is scheduled or running on `queue`.
        var draining = false
        var droppedLines = 0
        var bytesWritten = 0
        var closed = false
        var onClose: (@Sendable (_ reason: String) -> Void)?
        /// Where a count of dropped lines goes; nil: into this stream itself.
        var dropNote: (@Sendable (_ note: String) -> Void)?
    }

    init(descriptor: Int32, name: String, capacity: Int) {
        self.descriptor = descriptor
        self.name = name
        self.capacity = capacity
        queue = DispatchQueue(label: "svc.output.\(descriptor)")
    }

    /// Queues `text` (whole lines) to be written, or drops it when the buffer is full or the
    /// stream is closed. Never blocks on the reader.
    func write(_ text: String) {
        let startDrain = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard state.pending.count + text.utf8.count <= capacity else {
                state.droppedLines += 1
                return false
            }
            state.pending.append(contentsOf: text.utf8)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startDrain { queue.async { self.drain() } }
    }

    /// Sets what runs once when a write fails (e.g. EPIPE: nobody reads any more).
    func onClose(_ handler: @escaping @Sendable (_ reason: String) -> Void) {
        state.withLock { $0.onClose = handler }
    }

    /// Sets where the note about dropped lines goes (by default, into this stream).
    func sendDropNotes(to handler: @escaping @Sendable (_ note: String) -> Void) {
        state.withLock { $0.dropNote = handler }
    }

    /// True when everything queued has been written, or the stream is closed.
    var isIdle: Bool { state.withLock { $0.closed || (!$0.draining && $0.pending.isEmpty) } }
    /// Bytes written so far, to tell a slow reader from one that stopped.
    var bytesWritten: Int { state.withLock { $0.bytesWritten } }

    /// Closes the stream as if a write had failed with `reason`.
    func close(reason: String) {
        let handler = state.withLock { state -> (@Sendable (String) -> Void)? in
            guard !state.closed else { return nil }
            state.closed = true
            state.pending = []
            defer { state.onClose = nil }
            return state.onClose
        }
        handler?(reason)
    }

    private enum Step {
        case write([UInt8])
        case note(String, to: @Sendable (String) -> Void)
        case stop
    }

    /// Runs on `queue`: writes until the buffer is empty, then reports dropped lines.
    private func drain() {
        while true {
            let step = state.withLock { state -> Step in
                if state.closed || (state.pending.isEmpty && state.droppedLines == 0) {
                    state.draining = false
                    return .stop
                }
                if state.pending.isEmpty {
                    let count = state.droppedLines
                    state.droppedLines = 0
                    let text = "\(counted(count, "line was", "lines were")) not written to \(name) because it was not read fast enough"
                    guard let dropNote = state.dropNote else {
                        state.pending.append(contentsOf: "\(Console.toolName): \(text)\n".utf8)
                        return .write(state.pending.take())
                    }
                    state.draining = false
                    return .note(text, to: dropNote)
                }
                return .write(state.pending.take())
            }
            switch step {
            case .stop: return
            case .note(let text, let dropNote): return dropNote(text)
            case .write(let chunk):
                if let failure = writeAll(chunk) { return close(reason: failure) }
            }
        }
    }

    /// Writes every byte, waiting while the descriptor is non-blocking and full; returns why
    /// it could not, or nil.
    private func writeAll(_ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
                state.withLock { $0.bytesWritten += written }
                continue
            }
            let error = errno
            if written < 0 && error == EINTR { continue }
            if written < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, -1)
                continue
            }
            return written == 0 ? "write returned 0" : "\(String(cString: strerror(error))) (errno \(error))"
        }
        return nil
    }
}

private extension Array where Element == UInt8 {
    /// The contents, leaving the array empty.
    mutating func take() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &self)
        return taken
    }
}
