import Dispatch
import Glibc
import TransportCore

/// A connected TCP stream driven by Dispatch sources: bytes in through a handler, bytes out
/// through a bounded outbox.
///
/// - Important: every method must be called on `queue`, and the handlers run there. The
///   connection keeps itself alive until it is closed.
public final class Connection: @unchecked Sendable {
    /// Why a connection ended.
    public enum CloseReason: Sendable, Hashable, CustomStringConvertible {
        /// The peer closed its side in an orderly way (EOF).
        case closedByPeer
        /// The peer reset the connection (ECONNRESET/EPIPE).
        case reset
        /// A read or write failed, or the peer fell too far behind.
        case failed(TransportError)
        /// `close()` or `finish()` was called here.
        case closedLocally

        public var description: String {
            switch self {
            case .closedByPeer: "closed by the peer"
            case .reset: "reset by the peer"
            case .failed(let error): "failed: \(error)"
            case .closedLocally: "closed"
            }
        }
    }

    public let peer: SocketEndpoint?
    public let queue: DispatchQueue
    /// The most bytes that may wait to be sent; beyond it the peer is too slow and the
    /// connection fails rather than buffer without bound.
    public let outboxLimit: Int

    private let socket: Socket
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    private var isWriteSourceRunning = false
    private var isReadSourceSuspended = false
    private var isFinishing = false
    private var didShutDownSending = false
    private var peerSentEOF = false
    private var isFlushScheduled = false
    /// Whether the connection is closed for good. (After `finish()` it no longer sends, but it
    /// still receives until the peer closes.)
    public private(set) var isClosed = false
    /// How much the next read takes at most. Each read fills a new array handed to `onBytes`,
    /// so an idle connection holds no buffer and no byte is copied twice. Reads start small
    /// and grow while they come back full: bulk data needs large reads (256 KiB halved the
    /// time of a file transfer against 64 KiB), but allocating 256 KiB for every small
    /// message left 24 KiB of heap per connection in a room of 1,000.
    private var readSize = Connection.smallRead
    private static let smallRead = 16384
    private static let largeRead = 262144
    /// Sends at least this large go to the kernel at once; smaller ones are gathered and
    /// written together at the end of the queue's current work item (one write for many
    /// small messages sent in a row: 0.8 M to 4.3 M 64-byte messages a second).
    private static let directWriteMinimum = 16384
    /// An emptied outbox keeps at most this much memory: idle connections stay small.
    private static let idleCapacity = 16384
    private var onBytes: ([UInt8]) -> Void = { _ in }
    private var onClose: (CloseReason) -> Void = { _ in }
    private var onDrained: (() -> Void)?
    private var selfReference: Connection?

    public init(socket: Socket, peer: SocketEndpoint?, queue: DispatchQueue, outboxLimit: Int = 4 << 20) {
        self.socket = socket
        self.peer = peer
        self.queue = queue
        self.outboxLimit = outboxLimit
        // Small sends are gathered here already; Nagle's algorithm on top held a small frame
        // back for the peer's delayed ACK (40 ms before svc-connect could say goodbye).
        try? socket.setOption(Int32(IPPROTO_TCP), Int32(TCP_NODELAY), 1, "TCP_NODELAY")
        readSource = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: socket.fd, queue: queue)
    }

    /// Starts reading. `onBytes` gets each chunk as it arrives; `onClose` is called once.
    public func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (CloseReason) -> Void) {
        self.onBytes = onBytes
        self.onClose = onClose
        selfReference = self
        // The fd may be closed only when neither source uses it any more.
        let cancels = CancelCounter(remaining: 2)
        let closeWhenBothCancelled: @Sendable () -> Void = { [socket] in
            if cancels.countDown() { socket.close() }
        }
        readSource.setEventHandler { [unowned self] in readAvailable() }
        writeSource.setEventHandler { [unowned self] in flush() }
        readSource.setCancelHandler(handler: closeWhenBothCancelled)
        writeSource.setCancelHandler(handler: closeWhenBothCancelled)
        readSource.resume()
    }

    /// Whether the connection can still send.
    public var isOpen: Bool { !isClosed && !isFinishing }


    /// Bytes queued but not yet accepted by the kernel.
    public var bufferedByteCount: Int { outbox.count - outboxStart }

    /// Calls `handler` each time the outbox empties, so a producer (e.g. a file being sent)
    /// can queue more without the outbox growing: the flow control for bulk data.
    public func whenDrained(_ handler: (() -> Void)?) {
        onDrained = handler
    }

    /// Queues bytes for sending: large ones are written at once, small ones gathered and
    /// written together before the queue runs its next work item. Returns false (and closes
    /// the connection with `.failed`) when the outbox would pass `outboxLimit`.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }

    /// Like `send(_:)` for bytes the caller keeps: a large block is written straight to the
    /// socket when the kernel takes it, so only what it does not take at once is copied.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard isOpen else { return false }
        guard bufferedByteCount + bytes.count <= outboxLimit else {
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        var rest = bytes[...]
        if bytes.count >= Connection.directWriteMinimum, !isWriteSourceRunning {
            // Gathered small sends go first, then the block itself, without copying it.
            guard writeQueued() else { return false }
            if bufferedByteCount == 0 {
                do throws(TransportError) {
                    while !rest.isEmpty, case .processed(let count) = try socket.write(UnsafeRawBufferPointer(rebasing: rest)) {
                        rest = rest.dropFirst(count)
                    }
                } catch {
                    close(error.isReset ? .reset : .failed(error))
                    return false
                }
            }
        }
        guard !rest.isEmpty else { return true }
        outbox.append(contentsOf: rest)
        if bytes.count >= Connection.directWriteMinimum {
            setWriteSourceRunning(true)
        } else if !isWriteSourceRunning && !isFlushScheduled {
            isFlushScheduled = true
            queue.async { [self] in
                isFlushScheduled = false
                flush()
            }
        }
        return true
    }

    /// Sends what is queued, then shuts down the sending side; the connection closes when
    /// the peer closes its side.
    public func finish() {
        guard isOpen else { return }
        isFinishing = true
        flush()
    }

    /// Closes at once; queued bytes are dropped. `onClose` gets `.closedLocally`.
    public func close() { close(.closedLocally) }

    /// Stops reading until `resumeReading()`: for a consumer slower than the network (a
    /// disk), so that received data waits in the kernel (and TCP slows the sender) instead
    /// of piling up in memory.
    public func pauseReading() {
        setReadSourceRunning(false)
    }

    /// Reads again after `pauseReading()` (unless the peer has finished sending).
    public func resumeReading() {
        if !peerSentEOF { setReadSourceRunning(true) }
    }


    private func readAvailable() {
        guard !isClosed else { return }
        do throws(TransportError) {
            var result = IOResult.wouldBlock
            var failure: TransportError?
            let chunk = [UInt8](unsafeUninitializedCapacity: readSize) { buffer, count in
                do throws(TransportError) {
                    result = try socket.read(into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    failure = error
                }
                if case .processed(let read) = result { count = read } else { count = 0 }
            }
            if let failure { throw failure }
            switch result {
            case .wouldBlock: return
            case .processed(0): peerFinished()
            case .processed(let count):
                let wasShort = count < readSize
                readSize = count == readSize ? min(readSize * 4, Connection.largeRead) : count < Connection.smallRead ? Connection.smallRead : readSize
                onBytes(chunk)
                // The read source does not fire again for an EOF that arrived together with
                // the peer's last bytes (Dispatch on Linux counts bytes, and there are none
                // left). Once our side is shut down that EOF is all we wait for, so look for
                // it; otherwise the connection waited for ever (a TLS close_notify and the
                // FIN right behind it, say).
                if wasShort, didShutDownSending, !isClosed {
                    queue.async { [self] in if !isReadSourceSuspended { readAvailable() } }
                }
            }
        } catch {
            close(error.isReset ? .reset : .failed(error))
        }
    }

    /// EOF from the peer: deliver what we still owe it, then close.
    private func peerFinished() {
        peerSentEOF = true
        setReadSourceRunning(false)
        isFinishing = true
        flush()
    }

    private func flush() {
        guard !isClosed, writeQueued() else { return }
        if bufferedByteCount == 0 {
            setWriteSourceRunning(false)
            if isFinishing {
                shutDownSending()
            } else if onDrained != nil {
                // Later, not from inside send(): the handler may well call send() again.
                queue.async { [self] in if !isClosed { onDrained?() } }
            }
        } else {
            setWriteSourceRunning(true)
        }
    }

    /// Writes queued bytes until they are gone or the kernel takes no more. Returns false
    /// when the connection failed (and is now closed).
    private func writeQueued() -> Bool {
        do throws(TransportError) {
            while bufferedByteCount > 0 {
                let result = try outbox[outboxStart...].withUnsafeBytes { bytes in
                    Result { () throws(TransportError) in try socket.write(bytes) }
                }.get()
                guard case .processed(let count) = result else { break }
                outboxStart += count
            }
        } catch {
            close(error.isReset ? .reset : .failed(error))
            return false
        }
        if bufferedByteCount == 0 {
            outbox.removeAll(keepingCapacity: outbox.capacity <= Connection.idleCapacity)
            outboxStart = 0
        } else if outboxStart > 1 << 20 {
            outbox.removeFirst(outboxStart)
            outboxStart = 0
        }
        return true
    }

    /// Everything is sent: shut down our side, and close once the peer has closed its side.
    private func shutDownSending() {
        if !didShutDownSending {
            didShutDownSending = true
            do throws(TransportError) {
                try socket.shutdownWrite()
            } catch where !peerSentEOF {
                close(error.isReset ? .reset : .failed(error))
                return
            } catch {}
        }
        if peerSentEOF { close(.closedByPeer) }
    }

    private func setReadSourceRunning(_ running: Bool) {
        guard !isClosed, running == isReadSourceSuspended else { return }
        isReadSourceSuspended = !running
        if running { readSource.resume() } else { readSource.suspend() }
    }

    private func setWriteSourceRunning(_ running: Bool) {
        guard running != isWriteSourceRunning else { return }
        isWriteSourceRunning = running
        if running { writeSource.resume() } else { writeSource.suspend() }
    }

    private func close(_ reason: CloseReason) {
        guard !isClosed else { return }
        isClosed = true
        readSource.cancel()
        writeSource.cancel()
        if isReadSourceSuspended { readSource.resume() }
        if !isWriteSourceRunning { writeSource.resume() }
        let handler = onClose
        onBytes = { _ in }
        onClose = { _ in }
        onDrained = nil
        handler(reason)
        selfReference = nil
    }
}

/// Counts cancel handlers down; both run on the connection's queue.
private final class CancelCounter: @unchecked Sendable {
    private var remaining: Int
    init(remaining: Int) { self.remaining = remaining }
    /// Returns true for the last one.
    func countDown() -> Bool {
        remaining -= 1
        return remaining == 0
    }
}
