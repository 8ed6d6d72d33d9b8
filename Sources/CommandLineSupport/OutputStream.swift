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
///
/// A terminal stream may also show a status line (a progress bar) below the lines: each batch
/// of lines is written as "clear the status line, the lines, the status line again", so lines
/// land above it. The status line is state, not queued bytes: however often it changes while
/// the terminal is slow, only the latest one is drawn.
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

    fileprivate struct State {
        /// Bytes to write, in order, with the descriptor each goes to (see `write(_:to:)`).
        var pending: [Segment] = []
        var pendingCount = 0
        /// The status line to show (escaped, one line, no newline); nil: none.
        var status: [UInt8]?
        /// Whether a status line is on screen, and whether `status` changed since drawn.
        var statusShown = false
        var statusChanged = false
        /// Set by `endStatus`: no status line is drawn any more.
        var statusEnded = false
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

    /// Bytes for one descriptor.
    fileprivate struct Segment {
        var descriptor: Int32
        var bytes: [UInt8]
    }

    /// Queues `text` (whole lines) to be written, or drops it when the buffer is full or the
    /// stream is closed. Never blocks on the reader.
    /// - Parameter descriptor: where the text goes, nil for this stream's own descriptor.
    ///   Another one (stdout, when stdout and stderr are one terminal) keeps the text in
    ///   order with this stream's lines and status line.
    func write(_ text: String, to descriptor: Int32? = nil) {
        let descriptor = descriptor ?? self.descriptor
        let startDrain = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard state.pendingCount + text.utf8.count <= capacity else {
                state.droppedLines += 1
                return false
            }
            state.append(Array(text.utf8), to: descriptor)
            return state.startDraining()
        }
        if startDrain { queue.async { self.drain() } }
    }

    /// Shows `text` as the status line below everything written (escaped by the caller, one
    /// line that fits the terminal), or removes it (nil). Never blocks on the reader.
    func setStatus(_ text: String?) {
        let startDrain = state.withLock { state -> Bool in
            guard !state.closed, !state.statusEnded else { return false }
            let bytes = text.map { Array($0.utf8) }
            guard bytes != state.status else { return false }
            state.status = bytes
            state.statusChanged = true
            return state.startDraining()
        }
        if startDrain { queue.async { self.drain() } }
    }

    /// Removes the status line for good (before exiting: the shell's prompt goes where it was,
    /// and a redraw that comes later is ignored).
    func endStatus() {
        setStatus(nil)
        state.withLock { $0.statusEnded = true }
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
    var isIdle: Bool { state.withLock { $0.closed || (!$0.draining && $0.pending.isEmpty && !$0.statusChanged) } }
    /// True once a write failed or `close` was called.
    var isClosed: Bool { state.withLock { $0.closed } }
    /// Bytes written so far, to tell a slow reader from one that stopped.
    var bytesWritten: Int { state.withLock { $0.bytesWritten } }

    /// Closes the stream as if a write had failed with `reason`.
    func close(reason: String) {
        let handler = state.withLock { state -> (@Sendable (String) -> Void)? in
            guard !state.closed else { return nil }
            state.closed = true
            state.pending = []
            state.pendingCount = 0
            defer { state.onClose = nil }
            return state.onClose
        }
        handler?(reason)
    }

    private enum Step {
        case write([Segment])
        case note(String, to: @Sendable (String) -> Void)
        case stop
    }

    /// Runs on `queue`: writes until the buffer is empty, then reports dropped lines.
    private func drain() {
        while true {
            let step = state.withLock { state -> Step in
                if state.closed || (state.pending.isEmpty && state.droppedLines == 0 && !state.statusChanged) {
                    state.draining = false
                    return .stop
                }
                if state.pending.isEmpty && state.droppedLines == 0 {
                    return .write(state.takeStatusChange(descriptor: descriptor))
                }
                if state.pending.isEmpty {
                    let count = state.droppedLines
                    state.droppedLines = 0
                    let text = "\(counted(count, "line was", "lines were")) not written to \(name) because it was not read fast enough"
                    guard let dropNote = state.dropNote else {
                        state.append(Array("\(Console.toolName): \(text)\n".utf8), to: descriptor)
                        return .write(state.takeLines(descriptor: descriptor))
                    }
                    state.draining = false
                    return .note(text, to: dropNote)
                }
                return .write(state.takeLines(descriptor: descriptor))
            }
            switch step {
            case .stop: return
            case .note(let text, let dropNote): return dropNote(text)
            case .write(let segments):
                for segment in segments {
                    if let failure = writeAll(segment.bytes, to: segment.descriptor) { return close(reason: failure) }
                }
            }
        }
    }

    /// Writes every byte, waiting while the descriptor is non-blocking and full; returns why
    /// it could not, or nil.
    private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> String? {
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

extension OutputStream.State {
    /// Carriage return and "erase to the end of the line": removes a status line.
    static let clearLine: [UInt8] = Array("\r\u{1B}[K".utf8)

    mutating func append(_ bytes: [UInt8], to descriptor: Int32) {
        pendingCount += bytes.count
        if pending.last?.descriptor == descriptor {
            pending[pending.count - 1].bytes += bytes
        } else {
            pending.append(.init(descriptor: descriptor, bytes: bytes))
        }
    }

    /// Marks a drain as needed; true when none is scheduled yet.
    mutating func startDraining() -> Bool {
        guard !draining else { return false }
        draining = true
        return true
    }

    /// The pending lines, with the status line (on `descriptor`) taken down before them and
    /// drawn again after them; leaves nothing pending.
    mutating func takeLines(descriptor: Int32) -> [OutputStream.Segment] {
        var segments: [OutputStream.Segment] = []
        swap(&segments, &pending)
        pendingCount = 0
        if statusShown { segments.insert(.init(descriptor: descriptor, bytes: Self.clearLine), at: 0) }
        if let status { segments.append(.init(descriptor: descriptor, bytes: status + Self.clearLine.dropFirst())) }
        statusShown = status != nil
        statusChanged = false
        return segments
    }

    /// The status line drawn over the old one, or removed.
    mutating func takeStatusChange(descriptor: Int32) -> [OutputStream.Segment] {
        statusChanged = false
        defer { statusShown = status != nil }
        if let status { return [.init(descriptor: descriptor, bytes: [UInt8(ascii: "\r")] + status + Self.clearLine.dropFirst())] }
        return statusShown ? [.init(descriptor: descriptor, bytes: Self.clearLine)] : []
    }
}
