import Dispatch
import Glibc
import MessagingCore
import Synchronization
import TransportCore

extension FileTransfers {
    /// One file arriving. The inbox admitted it (it counts there until released); its partial
    /// file's descriptor is used and closed on `disk` only.
    final class Incoming {
        /// `hashing`: the resumed prefix is being hashed, no `FILE_ACCEPT` sent yet, so no data
        /// may come; `receiving`: accepted; `finishing`: `FILE_END` came, the result is on its way.
        enum State { case hashing, receiving, finishing }
        let offer: Message.FileOffer
        /// The member who sent it through the server (`FILE_OFFER_FROM`), or nil.
        let from: String?
        let key: PartialKey
        let fd: Int32
        /// Offered with a resume tag (`.streamedFiles`): the SHA-256 to check comes with `FILE_END`.
        let streamed: Bool
        /// Set when the transfer is dropped, so that hashing a long prefix stops early.
        let cancelled = Atomic(false)
        // On the link's queue:
        var state = State.hashing
        var startOffset: UInt64 = 0
        /// Bytes accepted so far (handed to `disk`, perhaps not written yet).
        var received: UInt64 = 0
        /// `received` when progress was last reported.
        var reported: UInt64 = 0
        /// The name events give the file (as the inbox would store it).
        var shownName = ""
        /// Offered with `FILE_OFFER_TO` to this side's own name: its sender waits for
        /// `FILE_CREDIT`, which lets the whole file come at once.
        var grantsWholeFile = false
        /// The hash of the data: of the resumed prefix on `resumeHashing` before `FILE_ACCEPT`,
        /// then of each chunk on `chunkHashing` (beside the writes on `disk`), and finished there.
        var hash = SHA256()
        // On the disk queue:
        var writeFailure: String?
        var closed = false

        init(offer: Message.FileOffer, from: String?, key: PartialKey, fd: Int32, streamed: Bool) {
            self.offer = offer
            self.from = from
            self.key = key
            self.fd = fd
            self.streamed = streamed
        }

        /// Closes the partial file once. On the disk queue.
        func close() {
            guard !closed else { return }
            closed = true
            _ = Glibc.close(fd)
        }
    }

    /// Reports an event, as relayed when the file came from (or goes to) another member.
    func emit(_ event: Event, member: String?) {
        onEvent(member.map { .relayed(member: $0, event) } ?? event)
    }

    /// Tells the sender `reason`, and the inbox's owner `detail` (or the same reason).
    func refuse(_ id: UInt32, _ status: Message.FileStatus, _ reason: String, detail: String? = nil, name: String, from: String? = nil) {
        link.send(.fileResult(id: id, status: status, message: reason))
        if from != nil { recentlyEndedRelayed.insert(id) }
        emit(.receiveFailed(name: name, reason: detail ?? reason), member: from)
    }


    /// An offer sent with `FILE_OFFER_TO` naming this side (a server's own name): answered
    /// as a `FILE_OFFER`, and the sender, which waits for credit as for any relayed file, is
    /// given all of it with the `FILE_ACCEPT`.
    func receivedOfferToThisSide(_ offer: Message.FileOffer) {
        received(offer, grantsWholeFile: true)
    }

    /// An offer from the peer, or (`from`) from another member through the server.
    /// - Parameters:
    ///   - from: the member who sent it through the server, or nil for the peer's own file.
    ///   - host: the server's tag for that member's host (`FILE_OFFER_FROM`).
    ///   - grantsWholeFile: answer the accept with credit for the whole file.
    func received(_ offer: Message.FileOffer, from: String? = nil, host: UInt64 = 0, grantsWholeFile: Bool = false) {
        guard let inbox else {
            return refuse(offer.id, .refused, "the receiver does not accept files: it was started without --inbox",
                          detail: "refused: files are accepted only with --inbox DIR; start again with it to receive files", name: offer.name, from: from)
        }
        guard offer.id != 0 else {
            return refuse(0, .refused, "transfer id 0 is not valid: a sender numbers its transfers from 1", name: offer.name, from: from)
        }
        guard incoming[offer.id] == nil else {
            return refuse(offer.id, .refused, "transfer id \(offer.id) is already in use", name: offer.name, from: from)
        }
        guard offer.size <= UInt64(Int64.max) else {
            return refuse(offer.id, .refused, "\(offer.size) bytes is larger than any file this system can store", name: offer.name, from: from)
        }
        // A relayed file resumes only from the same member name on the same host or key (as
        // the server tags it) through the same server, and those count as one sender when partial
        // data is evicted; data is never trusted by its key alone: the whole file's digest is
        // checked at the end.
        // A peer with a key (a secure link) is known by it, wherever it connects from; one
        // without, by its address.
        let address = link.connection.secureSession.map { "key " + $0.peerKey.full }
            ?? link.connection.peer?.addressWithScope ?? "an unknown address"
        let key = PartialKey(digest: offer.digest, size: offer.size,
                             sender: from == nil ? address : address + " relayed from host " + String(host, radix: 16), member: from,
                             host: link.connection.peer?.hostKey)
        // The same content already stored from the same sender, unchanged: answered as stored,
        // under its name (for a streamed offer: the same resume tag, the sender's word that its
        // file did not change since).
        let streamed = link.usesStreamedFiles
        if let (name, digest) = inbox.existing(key, size: offer.size) {
            // A streamed sender compares the digest with its file's (the tag is only its word).
            link.send(.fileResult(id: offer.id, status: .stored, message: streamed ? Self.storedAtOnceAnswer(name: name, digest: digest) : name))
            return emit(.stored(SentFile(path: inbox.directory + "/" + name, storedAs: name, size: offer.size, startOffset: offer.size,
                                         digest: digest)), member: from)
        }
        let admission: Inbox.Admission
        // Files whose data still has to come count for the member; files being verified and
        // stored count only for the inbox (so a sender may pipeline small files).
        let arriving = incoming.values.reduce(0) { $0 + ($1.state == .finishing ? 0 : 1) } + otherTransfers()
        switch inbox.admit(key, size: offer.size, memberTransfers: arriving) {
        case .failure(let refusal): return refuse(offer.id, refusal.status, refusal.message, detail: refusal.detail, name: offer.name, from: from)
        case .success(let admitted): admission = admitted
        }
        let transfer = Incoming(offer: offer, from: from, key: key, fd: admission.fd, streamed: streamed)
        transfer.grantsWholeFile = grantsWholeFile
        incoming[offer.id] = transfer
        guard admission.have > 0 else { return accept(transfer, at: 0) }
        let queue = link.scheduler
        // Data kept from an earlier transfer is hashed on `resumeHashing` (a 10 GiB prefix
        // takes a while), through a descriptor of its own, as `disk` may close the partial's
        // meanwhile; FILE_ACCEPT goes out when that is done.
        let copy = dup(admission.fd)
        let dupFailure = copy < 0 ? String(cString: strerror(errno)) : nil
        resumeHashing.execute { [self] in
            var failure = dupFailure
            if copy >= 0 {
                do throws(FileError) {
                    transfer.hash = try SHA256.digest(of: copy, length: admission.have,
                                                      isCancelled: { transfer.cancelled.load(ordering: .relaxed) })
                } catch {
                    failure = error.message
                }
                close(copy)
            }
            queue.execute { [self] in
                guard incoming[offer.id] === transfer else { return } // the link ended meanwhile
                if let failure {
                    dropIncoming(offer.id, deletingData: true)
                    return refuse(offer.id, .writeFailed, "the data kept from an earlier transfer could not be read (\(failure)) and was removed; send the file again",
                                  name: offer.name, from: from)
                }
                accept(transfer, at: admission.have)
            }
        }
    }

    /// Data may come: from `offset` on (the data before it is hashed already).
    private func accept(_ transfer: Incoming, at offset: UInt64) {
        transfer.state = .receiving
        transfer.startOffset = offset
        transfer.received = offset
        transfer.reported = offset
        transfer.shownName = InboxName.sanitized(transfer.offer.name)
        emit(.receiving(name: transfer.shownName, size: transfer.offer.size, resumingAt: offset), member: transfer.from)
        link.send(.fileAccept(id: transfer.offer.id, offset: offset))
        if transfer.grantsWholeFile { link.send(.fileCredit(id: transfer.offer.id, through: transfer.offer.size)) }
        guard let idle = inbox?.limits.transferIdleTimeout else { return }
        // A streamed sender hashes the data before `offset` before it sends any.
        watchForStall(transfer, sinceReceived: offset,
                      within: transfer.streamed && offset > 0 ? Self.resumeAllowance(skipping: offset, idleTimeout: idle) : idle)
    }

    /// The slowest read the first wait of a streamed resume allows for (a slow USB stick).
    static let slowestPrefixRead: UInt64 = 8 << 20

    /// How long the first chunk of a streamed transfer resumed at `offset` may take: the idle
    /// timeout, plus the time its sender needs to hash the `offset` bytes it skips at
    /// `slowestPrefixRead` bytes per second (docs/PROTOCOL.md, "Files"). Later waits are the
    /// idle timeout again.
    static func resumeAllowance(skipping offset: UInt64, idleTimeout: Duration) -> Duration {
        idleTimeout + .seconds(Int64(clamping: offset / slowestPrefixRead + 1))
    }

    /// Ends the transfer when too little data arrived within `timeout` (one pending check per
    /// transfer, moved on, with `transferIdleTimeout`, while data flows).
    private func watchForStall(_ transfer: Incoming, sinceReceived seen: UInt64, within timeout: Duration) {
        link.scheduler.schedule(after: timeout) { [weak self] in
            guard let self, incoming[transfer.offer.id] === transfer, transfer.state == .receiving else { return }
            // Progress counts only in earnest: at least `transferMinimumProgress` (or the rest).
            let wanted = min(inbox?.limits.transferMinimumProgress ?? 1, transfer.offer.size - min(seen, transfer.offer.size))
            guard transfer.received - min(seen, transfer.received) < max(1, wanted) else {
                return watchForStall(transfer, sinceReceived: transfer.received, within: inbox?.limits.transferIdleTimeout ?? timeout)
            }
            dropIncoming(transfer.offer.id, deletingData: false)
            let what = transfer.received == seen ? "no data arrived for \(timeout.secondsText)"
                : "less than \(counted(max(1, wanted), "byte")) arrived in \(timeout.secondsText)"
            refuse(transfer.offer.id, .refused, "\(what); the data so far is kept, and sending the file again resumes",
                   name: transfer.offer.name, from: transfer.from)
        }
    }

    func received(_ data: ArraySlice<UInt8>, for id: UInt32) {
        guard let transfer = incoming[id], transfer.state == .receiving else {
            return link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id), which is not an accepted transfer still open"))
        }
        guard !data.isEmpty else {
            // It would queue work and move nothing.
            return link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id) is empty; a chunk carries at least 1 byte"))
        }
        guard UInt64(data.count) <= transfer.offer.size - transfer.received else {
            dropIncoming(id, deletingData: true)
            return refuse(id, .refused, "more data than the \(counted(transfer.offer.size, "byte")) offered", name: transfer.offer.name, from: transfer.from)
        }
        let offset = transfer.received
        transfer.received += UInt64(data.count)
        if Self.isProgressWorthReporting(done: transfer.received, since: transfer.reported, total: transfer.offer.size) {
            transfer.reported = transfer.received
            emit(.progress(.receiving, name: transfer.shownName, done: transfer.received, total: transfer.offer.size), member: transfer.from)
        }
        // Each chunk costs at least `minimumChunkCost`, so the backlog bounds the queued work
        // items too (2,048 of them), not only their bytes.
        let cost = max(data.count, FileTransfers.minimumChunkCost)
        diskBacklog += cost
        if diskBacklog > FileTransfers.diskBacklogLimit { link.holdReading(.disk) }
        let queue = link.scheduler
        // Written on `disk` and hashed on `chunkHashing` at the same time (each in arrival order);
        // the chunk counts in the backlog until both are done with it.
        var unfinished = 2
        let finished = { [self] in
            unfinished -= 1
            guard unfinished == 0 else { return }
            diskBacklog -= cost
            if diskBacklog <= FileTransfers.diskBacklogLimit { link.releaseReading(.disk) }
        }
        chunkHashing.execute {
            data.withUnsafeBytes { transfer.hash.update($0) }
            queue.execute(finished)
        }
        disk.execute { [self] in
            var failure: String?
            if transfer.writeFailure == nil && !transfer.closed {
                failure = Self.write(data, to: transfer.fd, at: offset)
                if let failure { transfer.writeFailure = failure }
            }
            let failed = failure
            queue.execute { [self] in
                finished()
                guard incoming[id] === transfer else { return }
                if let failed {
                    dropIncoming(id, deletingData: false)
                    refuse(id, .writeFailed, "writing to the inbox failed: \(failed)", name: transfer.offer.name, from: transfer.from)
                } else if inbox?.consumed(UInt64(data.count), by: transfer.key) == false && transfer.state == .receiving {
                    // Beyond its share, it was not promised all it needs (`Promises`): others took the rest.
                    dropIncoming(id, deletingData: false)
                    refuse(id, .refused, "the inbox no longer has space for the rest of this file beside other senders' files; the data so far is kept, and sending the file again later resumes",
                           name: transfer.offer.name, from: transfer.from)
                }
            }
        }
    }

    /// Writes all of `data` at `offset`; returns why it failed, or nil.
    private static func write(_ data: ArraySlice<UInt8>, to fd: Int32, at offset: UInt64) -> String? {
        var written = 0
        while written < data.count {
            let count = data.dropFirst(written).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset) + off_t(written)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count < 0 ? String(cString: strerror(errno)) : "nothing was written" }
            written += count
        }
        return nil
    }

    /// What became of a file after its last byte.
    private enum Outcome {
        case stored(String)
        case failed(Message.FileStatus, String)
    }

    /// `FILE_END`: `digest` must come for a streamed transfer (it is what the data is checked
    /// against), and never for another (its offer named the digest).
    func ended(_ id: UInt32, digest: [UInt8]?) {
        guard let transfer = incoming[id], transfer.state == .receiving, let inbox else {
            return link.reject(ProtocolError(.fileProtocol, "FILE_END for id \(id), which is not an accepted transfer still open"))
        }
        guard transfer.streamed == (digest != nil) else {
            return link.reject(ProtocolError(.fileProtocol, transfer.streamed
                ? "FILE_END for id \(id) lacks the file's SHA-256, which a file offered by resume tag must carry"
                : "FILE_END for id \(id) carries a SHA-256, but its offer named the digest already"))
        }
        let expected = digest ?? transfer.offer.digest
        let name = transfer.offer.name
        guard transfer.received == transfer.offer.size else {
            dropIncoming(id, deletingData: false)
            return refuse(id, .refused, "the transfer ended after \(transfer.received) of \(counted(transfer.offer.size, "byte"))", name: name, from: transfer.from)
        }
        transfer.state = .finishing
        // After the last hash update, the digest; after the last write, the data on disk, its name.
        chunkHashing.execute { [self] in
            let received = transfer.hash.finish()
            disk.execute { [self] in store(transfer, id: id, received: received, expected: expected, inbox: inbox) }
        }
    }

    /// After the last write (on the disk queue): checks the digest, syncs the data, names the
    /// file, and tells the sender.
    private func store(_ transfer: Incoming, id: UInt32, received: [UInt8], expected: [UInt8], inbox: Inbox) {
        let name = transfer.offer.name
        let queue = link.scheduler
        // A failed write reports itself. When the link ended meanwhile, the complete data
        // stays partial: the sender, told nothing, sends again and gets one stored copy.
        guard transfer.writeFailure == nil, !transfer.closed, !transfer.cancelled.load(ordering: .relaxed) else { return }
        let outcome: Outcome
        if received != expected {
            inbox.remove(transfer.key)
            outcome = .failed(.checksumMismatch, transfer.streamed
                ? "the SHA-256 of the data received does not match the one its FILE_END gave; the data was removed and nothing was stored; send the file again"
                : "the SHA-256 of the data received does not match the offer; nothing was stored")
        } else if fsync(transfer.fd) != 0 {
            outcome = .failed(.writeFailed, "writing to the inbox failed: syncing the data to disk failed: \(String(cString: strerror(errno))); nothing was stored")
        } else {
            do throws(FileError) {
                let stored = try inbox.store(transfer.key, offeredName: name)
                inbox.remember(stored, key: transfer.key, size: transfer.offer.size, digest: expected)
                outcome = .stored(stored)
            } catch {
                outcome = .failed(.writeFailed, error.message)
            }
        }
        transfer.close()
        queue.execute { [self] in
            // Still current unless the link ended after the checks above: then the outcome
            // stands, but there is nobody to tell.
            let current = incoming[id] === transfer
            if current {
                incoming[id] = nil
                if transfer.from != nil { recentlyEndedRelayed.insert(id) }
                inbox.release(transfer.key)
            }
            switch outcome {
            case .stored(let stored):
                if current { link.send(.fileResult(id: id, status: .stored, message: stored)) }
                emit(.stored(SentFile(path: inbox.directory + "/" + stored, storedAs: stored, size: transfer.offer.size,
                                      startOffset: transfer.startOffset, digest: expected)), member: transfer.from)
            case .failed(let status, let reason):
                if current { refuse(id, status, reason, name: name, from: transfer.from) }
            }
        }
    }

    /// Forgets a transfer at once; its file is closed on the disk queue after the work queued
    /// there (an empty one removed, or any one when `deletingData`), and only then does the
    /// inbox stop counting it, so no new transfer opens the same file meanwhile.
    func dropIncoming(_ id: UInt32, deletingData: Bool) {
        guard let transfer = incoming.removeValue(forKey: id) else { return }
        if transfer.from != nil { recentlyEndedRelayed.insert(id) }
        transfer.cancelled.store(true, ordering: .relaxed)
        let inbox = inbox
        disk.execute {
            if !transfer.closed {
                if deletingData { inbox?.remove(transfer.key) } else { inbox?.removeIfEmpty(transfer.key, fd: transfer.fd) }
                transfer.close()
            }
            inbox?.release(transfer.key)
        }
    }
}
