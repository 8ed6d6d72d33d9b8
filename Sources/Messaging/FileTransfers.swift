import Dispatch
import Glibc
import MessagingCore
import TransportCore
import TransportPOSIX
import Synchronization

/// The files sent and received over one link (docs/PROTOCOL.md, "Files"). Outgoing files go
/// one at a time, read from disk only as fast as the connection drains, so memory stays flat
/// for any file size.
///
/// Between peers with `.streamedFiles` a file is offered at once, under a resume tag (see
/// `resumeTag`), hashed as `pump` sends it, and its SHA-256 goes with `FILE_END`; with older
/// peers it is hashed whole before the offer.
///
/// Executors: receiving never waits behind sending. Outgoing files are read end to end (hashed)
/// on `reading`; received chunks are hashed on `chunkHashing` while `disk` writes them; the data
/// an incoming resume kept is hashed on `resumeHashing`. Only short work per chunk runs where
/// received data waits, so a long read of an outgoing file never fills the backlog that stops
/// the link reading (which would stop its texts and pings too).
///
/// Descriptors: an outgoing file's descriptor is hashed and closed on `reading`, and read by
/// `pump` on the link's queue only while the transfer is current, so it is never closed while
/// read. An incoming file's descriptor is written, synced and closed on `disk` only; its
/// resumed prefix is hashed through a duplicate descriptor that `resumeHashing` closes.
///
/// - Important: every method runs on the link's queue.
public final class FileTransfers {
    /// What happened to a file, for the tool to print.
    public enum Event: Sendable {
        /// A file is coming (its name as the inbox would store it), from `resumingAt` on.
        case receiving(name: String, size: UInt64, resumingAt: UInt64)
        case stored(SentFile)
        case receiveFailed(name: String, reason: String)
        /// An event about a file passed on by the room's server, with the other member: the
        /// one who sent it (`FILE_OFFER_FROM`), or the one we send it to (`FILE_OFFER_TO`).
        indirect case relayed(member: String, Event)
        /// The receiver accepted a file we offered (`name` is its path here): its data goes
        /// from `resumingAt` on.
        case sending(name: String, size: UInt64, resumingAt: UInt64)
        /// `done` bytes of a file (named as in `sending` or `receiving`) are through: reported
        /// after each 1% of the file or each 1 MiB, whichever is less, and at the end.
        case progress(Direction, name: String, done: UInt64, total: UInt64)
    }

    /// Which way a file goes.
    public enum Direction: Sendable, Hashable {
        case sending, receiving
    }

    /// Whether enough came since the last progress report for another one (see `progress`).
    static func isProgressWorthReporting(done: UInt64, since last: UInt64, total: UInt64) -> Bool {
        done == total || done - min(last, done) >= min(total / 100, UInt64(chunkSize))
    }

    /// A file that arrived complete and verified (received), or that the peer confirmed (sent).
    public struct SentFile: Sendable, Hashable {
        /// The path it was read from (sending) or stored at (receiving).
        public let path: String
        /// The name the receiver stored it under.
        public let storedAs: String
        public let size: UInt64
        /// Where this transfer started: more than 0 when it resumed an earlier one.
        public let startOffset: UInt64
        public let digest: [UInt8]
        /// Bytes that crossed the network this time.
        public var bytesTransferred: UInt64 { size - startOffset }
    }

    /// Chunks fill a whole frame (1 MiB of payload, 4 bytes of it the transfer id).
    static let chunkSize = Frame.maximumPayload - 4
    /// More is read from disk only while less than this waits in the outbox; with a chunk on
    /// top it stays under the connection's outbox limit (4 MiB by default).
    static let outboxTarget = 2 << 20

    let link: PeerLink
    let inbox: Inbox?
    let onEvent: (Event) -> Void
    var outgoing: [Outgoing] = []
    var incoming: [UInt32: Incoming] = [:]
    /// The last 16 relayed files this side refused or ended: the sender's `FILE_CANCEL` may
    /// cross our answer on the way, and is then dropped rather than answered as an error
    /// (which the server would print under our name).
    var recentlyEndedRelayed = RecentIDs<UInt32>()
    /// The last 16 offers this side gave up on for want of an answer: a late `FILE_ACCEPT` or
    /// `FILE_RESULT` for one may cross our `FILE_CANCEL`, and is then dropped.
    private var recentlyAbandoned = RecentIDs<UInt32>()
    /// How long the receiver may take to answer an offer (plus the time it may need to hash
    /// a kept prefix, `resumeAllowance`) and to give the result after `FILE_END`: the idle
    /// bound receivers and the room's relay use (`Inbox.Limits.transferIdleTimeout`), so that
    /// a peer that never answers cannot keep a file, and those after it, waiting for ever.
    public var answerTimeout = Inbox.Limits().transferIdleTimeout
    /// How long the sender of a relayed file waits for the room's `FILE_CREDIT` once it has
    /// sent all the data granted and more is left: then the transfer ends as not delivered
    /// (`FILE_CANCEL` to the room), so that a room that accepts and never grants (hostile, or
    /// a relay bug) cannot keep the file, and those after it, waiting for ever while the
    /// heartbeat keeps the link up. Only time spent waiting for credit counts, never time
    /// the sender's own outbox took, and only a grant of `creditStep` or more starts it
    /// again. A working room grants as the recipient takes the data, and ends a transfer
    /// whose recipient stopped taking it itself, with its own reason: its
    /// relay checks every `transferIdleTimeout` (60 s) for enough progress since the offer or
    /// the last check that saw enough, so within two of them (120 s) of the stall; 30 s more
    /// lets that reason arrive first. (Not always after a streamed resume: the relay's first
    /// wait then also allows for the sender hashing what it skips, and a recipient that stops
    /// right after it may meet this bound first; the file is reported not delivered either way.)
    public static let creditTimeout = Inbox.Limits().transferIdleTimeout * 2 + .seconds(30)
    /// The least grant (or the rest of the file) that starts the wait for credit again: a
    /// working room grants at least this much at a time (`FileRelay.Limits.minimumGrant`).
    public static let creditStep: UInt64 = 64 << 10
    /// Runs while the current file's data (or its end) waits in the outbox: ends the link when
    /// the outbox takes nothing for `answerTimeout` (`FileTransfers+Outbox.swift`).
    var outboxWatch: (any ScheduledWork)?
    /// Why this side closed the link (its outbox took nothing), for the files it ends.
    var outboxStall: String?
    /// Called when this side closes the link because the outbox under a file took nothing for
    /// the given time, before the link ends: the owner may count it as a stalled connection.
    public var onOutboxStall: ((Duration) -> Void)?
    private var nextID: UInt32
    /// The ids this side gives its offers (a server keeps the upper half for relayed files).
    private let ids: ClosedRange<UInt32>
    /// Files other than those here that count toward this peer's transfers at once (on a
    /// server: the files it relays from this member).
    public var otherTransfers: () -> Int = { 0 }
    /// Hashes outgoing files and closes their descriptors, in that order (long work: a whole
    /// file, or the part of it a resume skips).
    let reading: any Executor
    /// Hashes received chunks in arrival order while `disk` writes them (two cores share the
    /// work of one file), and nothing else, so a chunk never waits behind a whole file.
    let chunkHashing: any Executor
    /// Hashes the data an incoming resume kept, before its `FILE_ACCEPT` (a 10 GiB prefix
    /// takes a while), apart from the chunks and writes of other transfers.
    let resumeHashing: any Executor
    /// Writes, syncs, stores and closes received files in the order their frames arrived, so
    /// that the link's queue keeps receiving meanwhile.
    let disk: any Executor
    /// Received file data not yet written; above `diskBacklogLimit` the link stops reading.
    var diskBacklog = 0
    static let diskBacklogLimit = 8 << 20
    /// What a chunk counts in `diskBacklog` at least, however small.
    static let minimumChunkCost = 4 << 10
    /// Where chunks are read from disk; allocated only while a file is being sent (a room
    /// of 1,000 idle members would otherwise hold 1 GiB of them).
    private var buffer: [UInt8] = []

    /// Used on the link's queue, except `fd` and `cancelled`, which `reading` also reads.
    final class Outgoing {
        /// `ended`: all data and `FILE_END` went out; only the result may come. `confirming`:
        /// answered stored at once, the file is hashed to compare with the receiver's digest;
        /// nothing more may come.
        enum State { case hashing, offered, accepted, ended, confirming }
        let path: String
        let completion: (Result<SentFile, FileError>) -> Void
        /// The member it is for (relayed by the server), or nil for the peer itself.
        let to: String?
        let cancelled = Atomic(false)
        var state = State.hashing
        var fd: Int32 = -1
        /// 0 until the offer is sent: no reply can match before.
        var id: UInt32 = 0
        var size: UInt64 = 0
        var digest: [UInt8] = []
        /// Offered with a resume tag: hashed while sent, the digest goes with `FILE_END`.
        var streamed = false
        /// For a streamed file, the hash of everything before `offset`; nil while the data
        /// before a resumed offset is hashed on `reading` (nothing is sent meanwhile).
        var hash: SHA256?
        var offset: UInt64 = 0
        /// For a relayed file, how far the server lets data go (`FILE_CREDIT`); nil: no limit.
        var credit: UInt64?
        var startOffset: UInt64 = 0
        var lastProgress: UInt64 = 0
        /// Ends the transfer when the receiver does not answer the offer, or the end, in time.
        var deadline: (any ScheduledWork)?
        /// Ends a relayed transfer whose data all went as far as its credit and that got no
        /// more credit within `creditTimeout`; running only while it waits so.
        var creditWait: (any ScheduledWork)?
        /// Ended: `sentByteCount` of the link's stream once `FILE_END` has left the outbox;
        /// nil once the wait for `FILE_RESULT` has started (`FileTransfers+Outbox.swift`).
        var endLeavesAt: Int?
        init(path: String, to: String?, completion: @escaping (Result<SentFile, FileError>) -> Void) {
            self.path = path
            self.to = to
            self.completion = completion
        }
    }

    /// - Parameters:
    ///   - inbox: where received files go, or nil to refuse files.
    ///   - disk: a serial executor for writing, hashing and closing received files (nil: a
    ///     queue of its own); results come back on the link's scheduler.
    ///   - hashing: a serial executor where outgoing files are hashed and closed (nil: a queue
    ///     of its own).
    ///   - receivedHashing: a serial executor where received chunks, and apart from them the
    ///     data a resume kept, are hashed (nil: `disk` when one is given, else queues of their
    ///     own). It must not be `hashing`'s, or a long outgoing read would stop the link.
    ///   - ids: the ids this side's offers take, in turn (never 0).
    ///
    /// Tests pass the link's own manual scheduler for `disk` and `hashing`, so that a transfer
    /// runs deterministically on one thread.
    public init(link: PeerLink, inbox: Inbox?, disk: (any Executor)? = nil, hashing: (any Executor)? = nil,
                receivedHashing: (any Executor)? = nil,
                ids: ClosedRange<UInt32> = 1...UInt32.max, onEvent: @escaping (Event) -> Void) {
        self.link = link
        self.ids = ids.lowerBound == 0 ? 1...max(1, ids.upperBound) : ids
        nextID = self.ids.lowerBound
        self.inbox = inbox
        self.disk = disk ?? DispatchQueue(label: "svc.files.disk")
        reading = hashing ?? DispatchQueue(label: "svc.files.reading")
        chunkHashing = receivedHashing ?? disk ?? DispatchQueue(label: "svc.files.received")
        resumeHashing = receivedHashing ?? disk ?? DispatchQueue(label: "svc.files.resumed")
        self.onEvent = onEvent
    }

    // MARK: Sending

    /// Sends a file; `completion` runs on the queue once the receiver confirmed it (or it failed).
    /// - Parameter to: another member of the room, for the server to relay the file to
    ///   (`FILE_OFFER_TO`; only to a server with `.relayedFiles`), or nil for the peer itself.
    public func send(path: String, to: String? = nil, completion: @escaping (Result<SentFile, FileError>) -> Void) {
        link.scheduler.assertOnExecutor()
        let transfer = Outgoing(path: path, to: to, completion: completion)
        outgoing.append(transfer)
        if outgoing.count == 1 { offer(transfer) }
    }

    private func offer(_ transfer: Outgoing) {
        let fd: Int32
        let tag: [UInt8]
        do throws(FileError) {
            (fd, transfer.size, tag) = try Self.openForSending(transfer.path)
        } catch {
            return finishOutgoing(.failure(error))
        }
        transfer.fd = fd
        if link.usesStreamedFiles {
            transfer.streamed = true
            return sendOffer(transfer, digest: tag)
        }
        let queue = link.scheduler
        let size = transfer.size
        // Hashing reads the whole file: off the event queue, on the queue that closes `fd`.
        reading.execute { [self] in
            let result = Result { () throws(FileError) in
                try SHA256.digest(of: fd, length: size, isCancelled: { transfer.cancelled.load(ordering: .relaxed) }).finish()
            }
            queue.execute { [self] in
                guard outgoing.first === transfer else { return } // it failed or the link ended meanwhile
                switch result {
                case .failure(let error): finishOutgoing(.failure(FileError("cannot read \(transfer.path): \(error)")))
                case .success(let digest):
                    transfer.digest = digest
                    sendOffer(transfer, digest: digest)
                }
            }
        }
    }

    /// Offers the file under the next id, with its SHA-256 or (streamed) its resume tag.
    private func sendOffer(_ transfer: Outgoing, digest: [UInt8]) {
        transfer.id = nextID
        nextID = nextID == ids.upperBound ? ids.lowerBound : nextID + 1
        transfer.state = .offered
        let name = String(transfer.path.split(separator: "/").last ?? "file")
        let offer = Message.FileOffer(id: transfer.id, size: transfer.size, digest: digest, name: name)
        if !link.send(transfer.to.map { .fileOfferTo(offer, to: $0) } ?? .fileOffer(offer)) {
            return finishOutgoing(.failure(FileError("the connection closed before \(transfer.path) could be offered")))
        }
        // A resuming receiver hashes what it kept (at most the whole file) before it answers.
        let timeout = Self.resumeAllowance(skipping: transfer.size, idleTimeout: answerTimeout)
        awaitAnswer(transfer, in: .offered, within: timeout, "the receiver did not answer the offer of \(transfer.path) within \(timeout.secondsText); it was not delivered")
    }

    /// Gives up on `transfer` unless it left `state` within `timeout`: the receiver is told
    /// (`FILE_CANCEL`) and the file is reported not delivered with `failure`.
    func awaitAnswer(_ transfer: Outgoing, in state: Outgoing.State, within timeout: Duration, _ failure: String) {
        transfer.deadline?.cancel()
        transfer.deadline = link.scheduler.schedule(after: timeout) { [weak self, weak transfer] in
            guard let self, let transfer, outgoing.first === transfer, transfer.state == state else { return }
            recentlyAbandoned.insert(transfer.id)
            link.send(.fileCancel(id: transfer.id, reason: "no answer came within \(timeout.secondsText)"))
            finishOutgoing(.failure(FileError(failure)))
        }
    }

    /// A streamed file was accepted at `offset`: the data before it is hashed on `reading`
    /// (the receiver checks the whole file), then sending starts.
    private func hashPrefix(_ transfer: Outgoing, before offset: UInt64) {
        guard offset > 0 else {
            transfer.hash = SHA256()
            return pump()
        }
        let queue = link.scheduler
        let fd = transfer.fd
        reading.execute { [self] in
            let result = Result { () throws(FileError) in
                try SHA256.digest(of: fd, length: offset, isCancelled: { transfer.cancelled.load(ordering: .relaxed) })
            }
            queue.execute { [self] in
                guard outgoing.first === transfer else { return }
                switch result {
                case .success(let hash):
                    transfer.hash = hash
                    pump()
                case .failure(let error): abandon(transfer, reason: "cannot read \(transfer.path): \(error)")
                }
            }
        }
    }

    /// Ends the current transfer early: a short `FILE_END` makes the receiver refuse it
    /// (streamed: with the digest of what was sent, which cannot be the file's).
    private func abandon(_ transfer: Outgoing, reason: String) {
        link.send(.fileEnd(id: transfer.id, digest: transfer.streamed ? (transfer.hash ?? SHA256()).finish() : nil))
        finishOutgoing(.failure(FileError(reason)))
    }

    func pump() {
        guard let transfer = outgoing.first, transfer.state == .accepted, link.isOpen else { return }
        guard !transfer.streamed || transfer.hash != nil else { return } // the resumed prefix is being hashed
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: FileTransfers.chunkSize) }
        let limit = min(transfer.credit ?? transfer.size, transfer.size)
        while transfer.offset < limit && link.connection.bufferedByteCount < FileTransfers.outboxTarget {
            let want = Int(min(UInt64(FileTransfers.chunkSize), limit - transfer.offset))
            let count = buffer.withUnsafeMutableBytes { pread(transfer.fd, $0.baseAddress, want, off_t(transfer.offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "the file shrank while being sent"
                return abandon(transfer, reason: "cannot read \(transfer.path): \(reason)")
            }
            guard buffer.withUnsafeBytes({ bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[..<count])
                guard link.sendFileChunk(id: transfer.id, data: chunk) else { return false }
                transfer.hash?.update(chunk) // what was sent, even if the file changes meanwhile
                return true
            }) else { return }
            transfer.offset += UInt64(count)
            if Self.isProgressWorthReporting(done: transfer.offset, since: transfer.lastProgress, total: transfer.size) {
                transfer.lastProgress = transfer.offset
                emit(.progress(.sending, name: transfer.path, done: transfer.offset, total: transfer.size), member: transfer.to)
            }
        }
        if transfer.offset < limit {
            watchOutbox(transfer) // more may go once the outbox drains: it must move
        } else {
            outboxWatch?.cancel()
            outboxWatch = nil
        }
        if let credit = transfer.credit, transfer.offset >= credit, transfer.offset < transfer.size, transfer.creditWait == nil {
            awaitCredit(transfer)
        }
        if transfer.offset == transfer.size {
            transfer.state = .ended
            if let hash = transfer.hash { transfer.digest = hash.finish() }
            link.send(.fileEnd(id: transfer.id, digest: transfer.streamed ? transfer.digest : nil))
            endQueued(transfer)
        }
    }

    /// `transfer` sent all its credit allowed and more is left: gives up unless the room
    /// grants more within `creditTimeout` (the grant cancels this wait).
    private func awaitCredit(_ transfer: Outgoing) {
        let timeout = Self.creditTimeout
        transfer.creditWait = link.scheduler.schedule(after: timeout) { [weak self, weak transfer] in
            guard let self, let transfer, outgoing.first === transfer, transfer.state == .accepted else { return }
            transfer.creditWait = nil
            let sent = transfer.offset
            recentlyAbandoned.insert(transfer.id)
            link.send(.fileCancel(id: transfer.id, reason: "no FILE_CREDIT came within \(timeout.secondsText) after \(sent) of the \(transfer.size) bytes"))
            finishOutgoing(.failure(FileError(
                "the room let no more of \(transfer.path) go to \(transfer.to ?? "the recipient") for \(timeout.secondsText) (no FILE_CREDIT after \(sent) of its \(transfer.size) bytes), "
                + "though it neither ended the transfer nor dropped the recipient; it was not delivered: the room may be overloaded or faulty; send it again to resume, or ask the room's publisher")))
        }
    }

    /// A streamed offer answered "stored" at once: the file is hashed on `reading` and compared
    /// with the SHA-256 the receiver holds (`theirs`), then reported sent with nothing
    /// transferred, or (another file under the same tag) not sent.
    private func reportStoredAtOnce(_ transfer: Outgoing, as storedAs: String, theirs: [UInt8]) {
        transfer.state = .confirming
        let queue = link.scheduler
        let fd = transfer.fd
        reading.execute { [self] in
            let result = Result { () throws(FileError) in
                try SHA256.digest(of: fd, length: transfer.size, isCancelled: { transfer.cancelled.load(ordering: .relaxed) }).finish()
            }
            queue.execute { [self] in
                guard outgoing.first === transfer else { return }
                switch result {
                case .success(let digest) where digest == theirs:
                    finishOutgoing(.success(SentFile(path: transfer.path, storedAs: storedAs, size: transfer.size, startOffset: transfer.size,
                                                     digest: digest)))
                case .success(let digest):
                    finishOutgoing(.failure(FileError("the receiver answered that it holds \(transfer.path) already as \(storedAs), but what it holds has SHA-256 \(hexString(theirs)) and the file here \(hexString(digest)); nothing was sent: rename or copy the file (a new resume tag) and send it again")))
                case .failure(let error):
                    finishOutgoing(.failure(FileError("the receiver holds \(transfer.path) already as \(storedAs), but it cannot be read here to report it: \(error)")))
                }
            }
        }
    }

    private func finishOutgoing(_ result: Result<SentFile, FileError>) {
        guard !outgoing.isEmpty else { return }
        let transfer = outgoing.removeFirst()
        transfer.cancelled.store(true, ordering: .relaxed)
        transfer.deadline?.cancel()
        transfer.deadline = nil
        transfer.creditWait?.cancel()
        transfer.creditWait = nil
        outboxWatch?.cancel()
        outboxWatch = nil
        let fd = transfer.fd
        if fd >= 0 { reading.execute { close(fd) } } // after the hash that may still read it
        link.whenDrained(.files, nil)
        transfer.completion(result)
        if let next = outgoing.first { offer(next) } else { buffer = [] }
    }

    // MARK: Frames

    /// Handles a file frame; returns false for other messages.
    public func handle(_ message: Message) -> Bool {
        link.scheduler.assertOnExecutor()
        switch message {
        case .fileOffer(let offer): received(offer)
        case .fileOfferFrom(let offer, let from, let host): received(offer, from: from, host: host)
        case .fileCancel(let id, let reason):
            guard let transfer = incoming[id] else {
                if !recentlyEndedRelayed.contains(id) {
                    link.reject(ProtocolError(.fileProtocol, "FILE_CANCEL for id \(id), which is not a transfer still open"))
                }
                return true
            }
            dropIncoming(id, deletingData: false)
            emit(.receiveFailed(name: transfer.offer.name, reason: "\(reason); the data so far is kept, and sending the file again resumes"),
                 member: transfer.from)
        case .fileChunk(let id, let data): received(data, for: id)
        case .fileEnd(let id, let digest): ended(id, digest: digest)
        case .fileAccept(let id, let offset):
            // Only once, for the offer sent last, within the file.
            guard let transfer = outgoing.first, transfer.state == .offered, transfer.id == id, offset <= transfer.size else {
                if recentlyAbandoned.contains(id) { return true } // it crossed our FILE_CANCEL
                link.reject(ProtocolError(.fileProtocol, "FILE_ACCEPT for id \(id) at \(offset) matches no offer waiting for an answer"))
                return true
            }
            transfer.state = .accepted
            transfer.offset = offset
            // A relayed file's data waits for the server's FILE_CREDIT.
            transfer.credit = transfer.to == nil ? nil : offset
            transfer.startOffset = offset
            transfer.lastProgress = offset
            emit(.sending(name: transfer.path, size: transfer.size, resumingAt: offset), member: transfer.to)
            link.whenDrained(.files) { [weak self] in self?.outboxDrained() }
            if transfer.streamed { hashPrefix(transfer, before: offset) } else { pump() }
        case .fileCredit(let id, let through):
            // Credit only grows; one for a transfer no longer sent (it may have crossed the
            // end on the wire) is dropped.
            guard let transfer = outgoing.first, transfer.state == .accepted, transfer.id == id, let credit = transfer.credit else { return true }
            let granted = max(credit, min(through, transfer.size))
            transfer.credit = granted
            if granted - credit >= min(Self.creditStep, transfer.size - credit) {
                // More may go: the wait for credit starts again when this is used up. A
                // smaller grant is used but does not: a room trickling a byte at a time could
                // otherwise hold the file for ever (review attacks17).
                transfer.creditWait?.cancel()
                transfer.creditWait = nil
            }
            pump()
        case .fileResult(let id, let status, let text):
            // None before the offer, and none after a stored-at-once answer (being confirmed).
            guard let transfer = outgoing.first, transfer.state != .hashing, transfer.state != .confirming, transfer.id == id else {
                if recentlyAbandoned.contains(id) { return true } // it crossed our FILE_CANCEL
                link.reject(ProtocolError(.fileProtocol, "FILE_RESULT for id \(id) matches no offered file waiting for a result"))
                return true
            }
            if status == .stored && transfer.state == .accepted {
                // Data is on its way: the receiver cannot have checked it before all of it and
                // FILE_END (also without a resume tag: review attacks17 saw a partly sent file
                // reported as sent and verified).
                link.reject(ProtocolError(.fileProtocol, "FILE_RESULT stored for id \(id) before the file's FILE_END"))
                finishOutgoing(.failure(FileError("the receiver claimed to have stored \(transfer.path) before it was sent; it was not delivered")))
            } else if status == .stored && transfer.streamed && transfer.state == .offered {
                // Stored at once: the receiver holds the file of this tag from us already. Its
                // answer names the SHA-256 it holds, which the file here must have too.
                guard let (theirs, storedAs) = Self.parseStoredAtOnceAnswer(text) else {
                    link.reject(ProtocolError(.fileProtocol, "FILE_RESULT stored for id \(id) before any data lacks the SHA-256 the receiver holds"))
                    finishOutgoing(.failure(FileError("the receiver claimed to hold \(transfer.path) already but did not say what it holds; it was not sent")))
                    return true
                }
                reportStoredAtOnce(transfer, as: storedAs, theirs: theirs)
            } else if status == .stored {
                // Stored without being accepted: the receiver had this content already.
                finishOutgoing(.success(SentFile(path: transfer.path, storedAs: text, size: transfer.size,
                                                 startOffset: transfer.state == .offered ? transfer.size : transfer.startOffset,
                                                 digest: transfer.digest)))
            } else {
                finishOutgoing(.failure(FileError("the receiver did not store \(transfer.path): \(text)")))
            }
        default: return false
        }
        return true
    }

    /// The link ended: pending sends fail, partial data is kept to be resumed.
    public func linkEnded(_ reason: PeerLink.EndReason) {
        link.scheduler.assertOnExecutor()
        // Closed here because the outbox took nothing: that says more than the close itself.
        let why = outboxStall ?? reason.description
        for (id, transfer) in incoming {
            dropIncoming(id, deletingData: false)
            emit(.receiveFailed(name: transfer.offer.name, reason: "\(why); the data so far is kept, and sending the file again resumes"),
                 member: transfer.from)
        }
        while !outgoing.isEmpty {
            let path = outgoing[0].path
            let advice = outboxStall == nil ? "" : "; send it again to resume"
            finishOutgoing(.failure(FileError("\(path) was not delivered: \(why)\(advice)")))
        }
    }
}
