import TransportCore
import TransportPOSIX

/// One end of an in-memory byte stream: what one end sends, the other receives when the
/// scheduler runs, in order, at most `deliveryChunk` bytes per `onBytes` call. It behaves
/// like `Connection` where links can tell: a bounded outbox (bytes the other end has not
/// read yet: when it pauses reading, the sender's outbox fills and passes its limit), an
/// orderly finish that waits for both sides, an abrupt close, and `whenDrained`.
///
/// - Important: use from the scheduler's thread only (see `ManualScheduler`).
public final class InMemoryStream: ByteStream, @unchecked Sendable {
    public let peer: SocketEndpoint?
    /// The most bytes that may wait for the other end; beyond it `send` fails and closes.
    public let outboxLimit: Int
    /// The most bytes handed to `onBytes` at once (like a read of that size).
    public var deliveryChunk: Int
    /// When set, this end takes at most this many more bytes, then pauses reading (a reader
    /// that reads a little and stops): set it, then `resumeReading()`.
    public var readBudget: Int?
    /// Sees every byte `send` accepts, in order: a test checks what the code under test
    /// writes (`inject` bypasses it).
    public var tap: (([UInt8]) -> Void)?
    /// What this end reports as its secure session: set it to play a TLS link whose peer has
    /// that key (nil, the default, is a plain stream).
    public var secureSession: SecureSession?
    private let scheduler: any Scheduler
    private weak var other: InMemoryStream?
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    private var started = false
    private var isPaused = false
    private var isFinishing = false
    private var sentEOF = false
    private var peerSentEOF = false
    private var deliveryScheduled = false
    private var onBytes: ([UInt8]) -> Void = { _ in }
    private var onClose: (Connection.CloseReason) -> Void = { _ in }
    private var onDrained: (() -> Void)?
    /// `onDrained` is also called when a delivery takes the outbox to this many bytes or fewer.
    private var drainMark = 0
    private var selfReference: InMemoryStream?

    public private(set) var isClosed = false
    /// Why the stream closed, once it has.
    public private(set) var closeReason: Connection.CloseReason?
    /// Every byte ever accepted by `send`.
    public private(set) var bytesSent = 0
    /// The most bytes that ever waited in the outbox at once.
    public private(set) var peakBufferedByteCount = 0

    /// Two connected ends.
    /// - Parameters:
    ///   - scheduler: runs the deliveries (and must run the code that uses the ends).
    ///   - outboxLimit: per end; 4 MiB like `Connection`.
    ///   - deliveryChunk: the most bytes one `onBytes` call gets.
    ///   - peers: what each end reports as its peer.
    public static func pair(scheduler: any Scheduler, outboxLimit: Int = 4 << 20, deliveryChunk: Int = 262144,
                            peers: (SocketEndpoint?, SocketEndpoint?) = (nil, nil)) -> (InMemoryStream, InMemoryStream) {
        let a = InMemoryStream(peer: peers.0, scheduler: scheduler, outboxLimit: outboxLimit, deliveryChunk: deliveryChunk)
        let b = InMemoryStream(peer: peers.1, scheduler: scheduler, outboxLimit: outboxLimit, deliveryChunk: deliveryChunk)
        a.other = b
        b.other = a
        // Each end lives until it is closed, as a Connection does.
        a.selfReference = a
        b.selfReference = b
        return (a, b)
    }

    private init(peer: SocketEndpoint?, scheduler: any Scheduler, outboxLimit: Int, deliveryChunk: Int) {
        self.peer = peer
        self.scheduler = scheduler
        self.outboxLimit = outboxLimit
        self.deliveryChunk = max(1, deliveryChunk)
    }

    public var isOpen: Bool { !isClosed && !isFinishing }
    public var bufferedByteCount: Int { outbox.count - outboxStart }
    /// What waits and what was delivered but not yet let go (the outbox empties at once when
    /// all is delivered); room to grow is left out, so that tests do not depend on how Swift
    /// grows arrays.
    public var heldByteCount: Int { outbox.count }
    /// Bytes the other end has taken so far.
    public private(set) var sentByteCount = 0

    public func start(onBytes: @escaping ([UInt8]) -> Void, onClose: @escaping (Connection.CloseReason) -> Void) {
        self.onBytes = onBytes
        self.onClose = onClose
        started = true
        other?.scheduleDelivery()
    }

    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard isOpen else { return false }
        guard bufferedByteCount + bytes.count <= outboxLimit else {
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        tap?(Array(bytes))
        return enqueue(bytes)
    }

    /// Sends bytes as if a third party had written them into the stream (between whole
    /// frames of the code under test): not seen by `tap`.
    @discardableResult
    public func inject(_ bytes: [UInt8]) -> Bool {
        guard isOpen else { return false }
        guard bufferedByteCount + bytes.count <= outboxLimit else {
            close(.failed(TransportError("send", message: "the peer is not reading; more than \(outboxLimit) bytes are waiting")))
            return false
        }
        return bytes.withUnsafeBytes { enqueue($0) }
    }

    private func enqueue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        outbox.append(contentsOf: bytes)
        bytesSent += bytes.count
        peakBufferedByteCount = max(peakBufferedByteCount, bufferedByteCount)
        scheduleDelivery()
        return true
    }

    public func finish() {
        guard isOpen else { return }
        isFinishing = true
        scheduleDelivery()
    }

    public func close() { close(.closedLocally) }

    public func pauseReading() { isPaused = true }

    public func resumeReading() {
        guard isPaused else { return }
        isPaused = false
        other?.scheduleDelivery()
    }

    public func whenDrained(toAtMost mark: Int, _ handler: (() -> Void)?) {
        onDrained = handler
        drainMark = max(0, mark)
    }

    /// Whether this end takes bytes now.
    private var isReading: Bool { started && !isPaused && !isClosed && !peerSentEOF }

    private func scheduleDelivery() {
        guard !deliveryScheduled, !isClosed else { return }
        deliveryScheduled = true
        scheduler.execute { [self] in
            deliveryScheduled = false
            deliver()
        }
    }

    /// Hands the outbox to the other end while it reads; then, when finishing and empty,
    /// sends the end of the stream.
    private func deliver() {
        guard !isClosed else { return }
        guard let other, !other.isClosed else {
            // The other end is gone: what waits cannot be delivered.
            if bufferedByteCount > 0 { close(.reset) } else if isFinishing { close(.closedByPeer) }
            return
        }
        var delivered = false
        let before = bufferedByteCount
        while bufferedByteCount > 0, other.isReading {
            let size = min(deliveryChunk, bufferedByteCount, other.readBudget ?? Int.max)
            if let budget = other.readBudget { other.readBudget = budget - size }
            if other.readBudget == 0 {
                other.readBudget = nil
                other.isPaused = true
            }
            guard size > 0 else { break }
            let end = outboxStart + size
            let chunk = Array(outbox[outboxStart..<end])
            outboxStart = end
            sentByteCount += size
            if outboxStart == outbox.count {
                outbox.removeAll(keepingCapacity: outbox.capacity <= 16384)
                outboxStart = 0
            }
            delivered = true
            other.onBytes(chunk)
            if isClosed { return }
        }
        guard bufferedByteCount == 0 else {
            // Fell to the low-water mark without emptying (the other end stopped reading).
            guard !isFinishing, onDrained != nil, before > drainMark, bufferedByteCount <= drainMark else { return }
            return scheduler.execute { [self] in if !isClosed { onDrained?() } }
        }
        if isFinishing {
            if !sentEOF {
                sentEOF = true
                other.peerFinished()
            }
            if peerSentEOF { close(.closedByPeer) }
        } else if delivered, onDrained != nil {
            scheduler.execute { [self] in if !isClosed { onDrained?() } }
        }
    }

    /// The other end finished sending: deliver what we still owe it, then close.
    private func peerFinished() {
        guard !isClosed else { return }
        peerSentEOF = true
        isFinishing = true
        scheduleDelivery()
    }

    private func close(_ reason: Connection.CloseReason) {
        guard !isClosed else { return }
        let dropped = bufferedByteCount > 0
        isClosed = true
        closeReason = reason
        outbox = []
        outboxStart = 0
        // The other end sees a reset when data was lost, otherwise the end of the stream; if
        // that was sent already, what it still has for us can no longer be delivered.
        if let other, !other.isClosed {
            scheduler.execute { [other, sentEOF] in
                if dropped { other.close(.reset) } else if !sentEOF { other.peerFinished() } else { other.scheduleDelivery() }
            }
        }
        let handler = onClose
        onBytes = { _ in }
        onClose = { _ in }
        onDrained = nil
        handler(reason)
        selfReference = nil
    }
}
