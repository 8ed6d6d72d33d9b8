import Glibc
import TransportCore

/// A connected TCP stream on an event loop: bytes in through a handler, bytes out through a
/// bounded outbox. It watches its socket for reading while it reads, and for writing only while
/// the kernel has not taken everything it was given.
///
/// - Important: made on any thread, then used on `loop` only (checked in debug builds), where
///   its handlers run too. The loop keeps the connection alive until it is closed.
public final class Connection: EventLoopSelectable {
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
    /// The loop the connection lives on.
    public let loop: EventLoop
    /// The most bytes that may wait to be sent; beyond it the peer is too slow and the
    /// connection fails rather than buffer without bound.
    public let outboxLimit: Int

    private let socket: Socket
    private var registration: EventLoopRegistration?
    /// What the loop watches the socket for now: kept here, so that each small send asks no
    /// dictionary of the loop's whether the connection waits for writability (a hash and a
    /// lookup per 64-byte message in a profile of `svc-bench flood`).
    private var watching: EventLoop.Interest = []
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    private var isReading = false
    private var isReadingPaused = false
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
    /// written together at the end of the loop's iteration (one write for many small messages
    /// sent in a row).
    private static let directWriteMinimum = 16384
    /// An emptied outbox keeps at most this much memory: idle connections stay small.
    private static let idleCapacity = 16384
    private var onBytes: ([UInt8]) -> Void = { _ in }
    private var onClose: (CloseReason) -> Void = { _ in }
    private var onDrained: (() -> Void)?
    /// `onDrained` is also called when a write takes the outbox to this many bytes or fewer.
    private var drainMark = 0

    /// Takes over `socket`; nothing happens on the loop until the first call there.
    public init(socket: Socket, peer: SocketEndpoint?, loop: EventLoop, outboxLimit: Int = 4 << 20) {
        self.socket = socket
        self.peer = peer
        self.loop = loop
        self.outboxLimit = outboxLimit
        // Small sends are gathered here already; Nagle's algorithm on top held a small frame
        // back for the peer's delayed ACK (40 ms before svc-connect could say goodbye).
        try? socket.setOption(Int32(IPPROTO_TCP), Int32(TCP_NODELAY), 1, "TCP_NODELAY")
    }

    /// Starts reading. `onBytes` gets each chunk as it arrives; `onClose` is called once.
    public func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (CloseReason) -> Void) {
        loop.assertOnExecutor()
        guard !isClosed else { return }
        self.onBytes = onBytes
        self.onClose = onClose
        isReading = true
        updateInterest()
    }

    /// Whether the connection can still send.
    public var isOpen: Bool { !isClosed && !isFinishing }

    /// Bytes queued but not yet accepted by the kernel.
    public var bufferedByteCount: Int { outbox.count - outboxStart }

    /// The memory the outbox holds: what waits, what was sent but not yet dropped, and room to
    /// grow. At most about four times what waits plus 64 KiB once a write has taken some (see
    /// `dropSent`); at most 16 KiB when it is empty.
    public var heldByteCount: Int { outbox.capacity }

    /// Bytes the kernel has accepted so far (see `ByteStream.sentByteCount`).
    public private(set) var sentByteCount = 0

    /// Bytes the peer's TCP has acknowledged so far: `sentByteCount` less what the kernel
    /// still holds for it (SIOCOUTQ; all of it counts as delivered if the kernel does not
    /// say). Never goes down (see `ByteStream.deliveredByteCount`).
    public var deliveredByteCount: Int {
        loop.assertOnExecutor()
        if !isClosed {
            let held = socket.unacknowledgedByteCount() ?? 0
            delivered = max(delivered, sentByteCount - min(held, sentByteCount))
        }
        return delivered
    }
    private var delivered = 0

    /// Calls `handler` each time the outbox empties, so a producer (e.g. a file being sent)
    /// can queue more without the outbox growing: the flow control for bulk data.
    /// Also when a write takes the outbox from over `mark` bytes to `mark` or fewer.
    public func whenDrained(toAtMost mark: Int, _ handler: (() -> Void)?) {
        loop.assertOnExecutor()
        onDrained = handler
        drainMark = max(0, mark)
    }

    /// Queues bytes for sending: large ones are written at once, small ones gathered and
    /// written together at the end of the loop's iteration. Returns false (and closes the
    /// connection with `.failed`) when the outbox would pass `outboxLimit`.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }

    /// Like `send(_:)` for bytes the caller keeps: a large block is written straight to the
    /// socket when the kernel takes it, so only what it does not take at once is copied.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        send(bytes, atOnce: bytes.count >= Connection.directWriteMinimum)
    }

    /// Like `send(_:)`, but written to the kernel now (behind what is queued, and only what it
    /// does not take waits), however small: for bytes the sender gathered over the turn itself
    /// and hands over at its end (a TLS stream's records). Gathered again here, they would wait
    /// for whatever else runs at the end of the iteration (a printing task) before leaving.
    @discardableResult
    public func sendNow(_ bytes: UnsafeRawBufferPointer) -> Bool {
        send(bytes, atOnce: true)
    }

    private func send(_ bytes: UnsafeRawBufferPointer, atOnce isLarge: Bool) -> Bool {
        loop.assertOnExecutor()
        guard isOpen else { return false }
        guard bufferedByteCount + bytes.count <= outboxLimit else {
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        var rest = bytes[...]
        if isLarge, !isWaitingForWritable {
            // Gathered small sends go first, then the block itself, without copying it.
            guard writeQueued() else { return false }
            if bufferedByteCount == 0 {
                do throws(TransportError) {
                    while !rest.isEmpty, case .processed(let count) = try socket.write(UnsafeRawBufferPointer(rebasing: rest)) {
                        rest = rest.dropFirst(count)
                        sentByteCount += count // taken by the kernel as surely as a queued write
                    }
                } catch {
                    close(error.isReset ? .reset : .failed(error))
                    return false
                }
            }
        }
        guard !rest.isEmpty else { return true }
        outbox.append(contentsOf: rest)
        if isLarge {
            updateInterest()
        } else {
            scheduleFlush()
        }
        return true
    }

    /// Lets `write` append to the outbox itself: a message encoded there is not first
    /// encoded into a buffer of the sender's and then copied (two copies and an access per
    /// 64-byte message in a profile of `svc-bench flood`). What it appends is sent as
    /// `send(_:)` sends it, gathered until the end of the loop's iteration.
    @discardableResult
    public func send(writing write: (inout [UInt8]) -> Void) -> Bool {
        loop.assertOnExecutor()
        guard isOpen else { return false }
        let before = outbox.count
        write(&outbox)
        guard bufferedByteCount <= outboxLimit else {
            outbox.removeSubrange(before...)
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        scheduleFlush()
        return true
    }

    /// Writes the gathered small sends at the end of the loop's iteration (unless the
    /// connection waits for writability, which flushes them then).
    private func scheduleFlush() {
        guard bufferedByteCount > 0, !isWaitingForWritable, !isFlushScheduled else { return }
        isFlushScheduled = true
        loop.executeAtEndOfIteration { [self] in
            isFlushScheduled = false
            flush()
        }
    }

    /// Sends what is queued, then shuts down the sending side; the connection closes when
    /// the peer closes its side.
    public func finish() {
        loop.assertOnExecutor()
        guard isOpen else { return }
        isFinishing = true
        flush()
    }

    /// Writes what is queued as if the loop had reported the socket writable (see
    /// `ByteStream.offerQueuedBytes`): the kernel takes what fits in its send buffer now.
    public func offerQueuedBytes() {
        loop.assertOnExecutor()
        guard isWaitingForWritable else { return }
        flush()
    }

    /// Closes at once; queued bytes are dropped. `onClose` gets `.closedLocally`.
    public func close() {
        loop.assertOnExecutor()
        close(.closedLocally)
    }

    /// Stops reading until `resumeReading()`: for a consumer slower than the network (a
    /// disk), so that received data waits in the kernel (and TCP slows the sender) instead
    /// of piling up in memory.
    public func pauseReading() {
        loop.assertOnExecutor()
        isReadingPaused = true
        updateInterest()
    }

    /// Reads again after `pauseReading()` (unless the peer has finished sending).
    public func resumeReading() {
        loop.assertOnExecutor()
        isReadingPaused = false
        updateInterest()
    }

    public func ready(_ readiness: EventLoop.Readiness) {
        if readiness.contains(.writable) { flush() }
        if readiness.contains(.readable) { readAvailable() }
    }

    public func eventLoopIsClosing() {
        close(.closedLocally)
    }

    private var isWaitingForWritable: Bool { bufferedByteCount > 0 && watching.contains(.write) }

    /// Watches the socket for what the connection waits for now: reading while it reads,
    /// writing while bytes wait for the kernel.
    private func updateInterest() {
        guard !isClosed else { return }
        var interest: EventLoop.Interest = []
        if isReading, !isReadingPaused, !peerSentEOF { interest.insert(.read) }
        if bufferedByteCount > 0, !isFlushScheduled { interest.insert(.write) }
        guard interest != watching else { return }
        do throws(TransportError) {
            if let registration {
                try loop.setInterest(interest, for: registration)
            } else {
                registration = try loop.register(socket.fd, interest: interest, owner: self)
            }
            watching = interest
        } catch {
            close(.failed(error))
        }
    }

    private func readAvailable() {
        guard !isClosed, isReading, !isReadingPaused, !peerSentEOF else { return }
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
                readSize = count == readSize ? min(readSize * 4, Connection.largeRead) : count < Connection.smallRead ? Connection.smallRead : readSize
                onBytes(chunk)
            }
        } catch {
            close(error.isReset ? .reset : .failed(error))
        }
    }

    /// EOF from the peer: deliver what we still owe it, then close.
    private func peerFinished() {
        peerSentEOF = true
        isFinishing = true
        updateInterest()
        flush()
    }

    private func flush() {
        let before = bufferedByteCount
        guard !isClosed, writeQueued() else { return }
        updateInterest()
        guard bufferedByteCount == 0 else {
            // Fell to the low-water mark without emptying: a waiting producer may go on.
            guard !isFinishing, onDrained != nil, before > drainMark, bufferedByteCount <= drainMark else { return }
            return loop.execute { [self] in if !isClosed { onDrained?() } }
        }
        if isFinishing {
            shutDownSending()
        } else if onDrained != nil {
            // Later, not from inside send(): the handler may well call send() again.
            loop.execute { [self] in if !isClosed { onDrained?() } }
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
                sentByteCount += count
            }
        } catch {
            close(error.isReset ? .reset : .failed(error))
            return false
        }
        dropSent()
        return true
    }

    /// Lets go of what the kernel took, so that the outbox's memory follows what still waits:
    /// a peer that read all but a little had kept all it read (and the room to grow it made)
    /// while it counted as holding little (a review's 400 such members held 937 MB of a room).
    /// What was sent goes once it is at least as large as what is left (each byte is moved at
    /// most once more than it is sent); the array is made anew, with room for twice what is
    /// left, once it holds over four times that plus 16 KiB. An emptied outbox keeps at most
    /// `idleCapacity`.
    private func dropSent() {
        let left = bufferedByteCount
        if left == 0 {
            outbox.removeAll(keepingCapacity: outbox.capacity <= Connection.idleCapacity)
            outboxStart = 0
        } else if outbox.capacity > 4 * (left + Connection.idleCapacity) {
            var smaller: [UInt8] = []
            smaller.reserveCapacity(2 * left)
            smaller.append(contentsOf: outbox[outboxStart...])
            outbox = smaller
            outboxStart = 0
        } else if outboxStart >= max(left, Connection.idleCapacity) {
            outbox.removeFirst(outboxStart)
            outboxStart = 0
        }
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

    private func close(_ reason: CloseReason) {
        guard !isClosed else { return }
        isClosed = true
        // The loop lets go of the descriptor before it is closed, so a new socket that gets the
        // same number cannot lose its events.
        if let registration { loop.deregister(registration) }
        registration = nil
        watching = []
        socket.close()
        outbox = []
        outboxStart = 0
        let handler = onClose
        onBytes = { _ in }
        onClose = { _ in }
        onDrained = nil
        handler(reason)
    }
}
