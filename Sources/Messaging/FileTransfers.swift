import Dispatch
import Glibc
import MessagingCore
import TransportCore
import TransportPOSIX

/// The files sent and received over one link (docs/PROTOCOL.md, "Files"). Outgoing files go
/// one at a time, read from disk only as fast as the connection drains, so memory stays flat
/// for any file size.
///
/// - Important: every method runs on the link's queue.
public final class FileTransfers: @unchecked Sendable {
    /// What happened to a file, for the tool to print.
    public enum Event: Sendable {
        case receiving(name: String, size: UInt64, resumingAt: UInt64)
        case stored(SentFile)
        case receiveFailed(name: String, reason: String)
        case progress(name: String, done: UInt64, total: UInt64)
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

    private let link: PeerLink
    private let inbox: Inbox?
    private let onEvent: (Event) -> Void
    private var outgoing: [Outgoing] = []
    private var incoming: [UInt32: Incoming] = [:]
    private var nextID: UInt32 = 1
    /// Writes, hashes and closes received files in the order their frames arrived, so that
    /// the link's queue keeps receiving meanwhile (two cores instead of one).
    private let disk: any Executor
    /// Where outgoing files are hashed before they are offered.
    private let hashing: any Executor
    /// Received file data not yet written; above `diskBacklogLimit` the link stops reading.
    private var diskBacklog = 0
    private static let diskBacklogLimit = 8 << 20
    /// Where chunks are read from disk; allocated only while a file is being sent (a room
    /// of 1,000 idle members would otherwise hold 1 GiB of them).
    private var buffer: [UInt8] = []

    /// Used on the link's queue only (the hash is computed from a copy of its fd and size).
    private final class Outgoing: @unchecked Sendable {
        let path: String
        let completion: (Result<SentFile, FileError>) -> Void
        var fd: Int32 = -1
        var id: UInt32 = 0
        var size: UInt64 = 0
        var digest: [UInt8] = []
        var offset: UInt64 = 0
        var startOffset: UInt64 = 0
        var lastProgress: UInt64 = 0
        init(path: String, completion: @escaping (Result<SentFile, FileError>) -> Void) {
            self.path = path
            self.completion = completion
        }
    }

    /// Used on the link's queue, except `hash`, which the disk queue feeds.
    private final class Incoming: @unchecked Sendable {
        let offer: Message.FileOffer
        let fd: Int32
        let partialPath: String
        let hash: SHA256
        let startOffset: UInt64
        /// Bytes accepted so far (handed to `disk`, perhaps not written yet).
        var received: UInt64
        init(offer: Message.FileOffer, fd: Int32, partialPath: String, hash: SHA256, startOffset: UInt64) {
            self.offer = offer
            self.fd = fd
            self.partialPath = partialPath
            self.hash = hash
            self.startOffset = startOffset
            received = startOffset
        }
    }

    /// - Parameters:
    ///   - inbox: where received files go, or nil to refuse files.
    ///   - disk: a serial executor for writing and hashing received data (nil: a queue of
    ///     its own); results come back on the link's scheduler.
    ///   - hashing: where outgoing files are hashed (nil: a global queue).
    ///
    /// Tests pass the link's own manual scheduler for both, so that a transfer runs
    /// deterministically on one thread.
    public init(link: PeerLink, inbox: Inbox?, disk: (any Executor)? = nil, hashing: (any Executor)? = nil,
                onEvent: @escaping (Event) -> Void) {
        self.link = link
        self.inbox = inbox
        self.disk = disk ?? DispatchQueue(label: "svc.files.disk")
        self.hashing = hashing ?? DispatchQueue.global()
        self.onEvent = onEvent
    }

    // MARK: Sending

    /// Sends a file; `completion` runs on the queue once the receiver confirmed it (or it failed).
    public func send(path: String, completion: @escaping (Result<SentFile, FileError>) -> Void) {
        let transfer = Outgoing(path: path, completion: completion)
        outgoing.append(transfer)
        if outgoing.count == 1 { offer(transfer) }
    }

    private func offer(_ transfer: Outgoing) {
        let fd = open(transfer.path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            let reason = fd < 0 ? String(cString: strerror(errno)) : "not a regular file"
            if fd >= 0 { close(fd) }
            return finishOutgoing(.failure(FileError("cannot send \(transfer.path): \(reason)")))
        }
        transfer.fd = fd
        transfer.size = UInt64(info.st_size)
        let queue = link.scheduler
        // Hashing reads the whole file: do it off the event queue.
        hashing.execute { [self] in
            let result = Result { () throws(FileError) in try SHA256.digest(of: fd, length: transfer.size).finish() }
            queue.execute { [self] in
                switch result {
                case .failure(let error): finishOutgoing(.failure(FileError("cannot read \(transfer.path): \(error)")))
                case .success(let digest):
                    transfer.digest = digest
                    transfer.id = nextID
                    nextID += 1
                    let name = String(transfer.path.split(separator: "/").last ?? "file")
                    if !link.send(.fileOffer(.init(id: transfer.id, size: transfer.size, digest: digest, name: name))) {
                        finishOutgoing(.failure(FileError("the connection closed before \(transfer.path) could be offered")))
                    }
                }
            }
        }
    }

    private func pump() {
        guard let transfer = outgoing.first, transfer.id != 0, link.isOpen else { return }
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: FileTransfers.chunkSize) }
        while transfer.offset < transfer.size && link.connection.bufferedByteCount < FileTransfers.outboxTarget {
            let want = Int(min(UInt64(FileTransfers.chunkSize), transfer.size - transfer.offset))
            let count = buffer.withUnsafeMutableBytes { pread(transfer.fd, $0.baseAddress, want, off_t(transfer.offset)) }
            guard count > 0 else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "the file shrank while being sent"
                link.send(.fileEnd(id: transfer.id))
                return finishOutgoing(.failure(FileError("cannot read \(transfer.path): \(reason)")))
            }
            guard buffer.withUnsafeBytes({ link.sendFileChunk(id: transfer.id, data: UnsafeRawBufferPointer(rebasing: $0[..<count])) }) else { return }
            transfer.offset += UInt64(count)
            if transfer.offset - transfer.lastProgress >= transfer.size / 100 || transfer.offset == transfer.size {
                transfer.lastProgress = transfer.offset
                onEvent(.progress(name: transfer.path, done: transfer.offset, total: transfer.size))
            }
        }
        if transfer.offset == transfer.size {
            link.connection.whenDrained(nil)
            link.send(.fileEnd(id: transfer.id))
        }
    }

    private func finishOutgoing(_ result: Result<SentFile, FileError>) {
        guard !outgoing.isEmpty else { return }
        let transfer = outgoing.removeFirst()
        if transfer.fd >= 0 { close(transfer.fd) }
        link.connection.whenDrained(nil)
        transfer.completion(result)
        if let next = outgoing.first { offer(next) } else { buffer = [] }
    }

    // MARK: Receiving and replies

    /// Handles a file frame; returns false for other messages.
    public func handle(_ message: Message) -> Bool {
        switch message {
        case .fileOffer(let offer): received(offer)
        case .fileChunk(let id, let data): received(data, for: id)
        case .fileEnd(let id): ended(id)
        case .fileAccept(let id, let offset):
            guard let transfer = outgoing.first, transfer.id == id, offset <= transfer.size else {
                link.reject(ProtocolError(.fileProtocol, "FILE_ACCEPT for id \(id) at \(offset) matches no offer"))
                return true
            }
            transfer.offset = offset
            transfer.startOffset = offset
            transfer.lastProgress = offset
            link.connection.whenDrained { [weak self] in self?.pump() }
            pump()
        case .fileResult(let id, let status, let text):
            guard let transfer = outgoing.first, transfer.id == id else {
                link.reject(ProtocolError(.fileProtocol, "FILE_RESULT for id \(id) matches no transfer"))
                return true
            }
            if status == .stored {
                finishOutgoing(.success(SentFile(path: transfer.path, storedAs: text, size: transfer.size,
                                                 startOffset: transfer.startOffset, digest: transfer.digest)))
            } else {
                finishOutgoing(.failure(FileError("the receiver did not store \(transfer.path): \(text)")))
            }
        default: return false
        }
        return true
    }

    private func refuse(_ id: UInt32, _ status: Message.FileStatus, _ reason: String, name: String) {
        link.send(.fileResult(id: id, status: status, message: reason))
        onEvent(.receiveFailed(name: name, reason: reason))
    }

    private func received(_ offer: Message.FileOffer) {
        guard let inbox else { return refuse(offer.id, .refused, "this peer does not accept files", name: offer.name) }
        guard incoming[offer.id] == nil else { return refuse(offer.id, .refused, "transfer id \(offer.id) is already in use", name: offer.name) }
        guard !inbox.receiving.contains(offer.digest) else {
            return refuse(offer.id, .refused, "the same file is being received from another transfer; send it again later", name: offer.name)
        }
        let path = inbox.partialPath(for: offer.digest)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return refuse(offer.id, .writeFailed, "cannot write to the inbox: \(String(cString: strerror(errno)))", name: offer.name) }
        var info = stat()
        fstat(fd, &info)
        var have = UInt64(info.st_size)
        if have > offer.size { ftruncate(fd, 0); have = 0 }
        let hash: SHA256
        do throws(FileError) { hash = try SHA256.digest(of: fd, length: have) } catch { ftruncate(fd, 0); have = 0; hash = SHA256() }
        if let free = inbox.freeBytes(), free < offer.size - have {
            close(fd)
            return refuse(offer.id, .refused, "not enough space in the inbox: \(offer.size - have) bytes needed, \(free) free", name: offer.name)
        }
        inbox.receiving.insert(offer.digest)
        incoming[offer.id] = Incoming(offer: offer, fd: fd, partialPath: path, hash: hash, startOffset: have)
        onEvent(.receiving(name: InboxName.sanitized(offer.name), size: offer.size, resumingAt: have))
        link.send(.fileAccept(id: offer.id, offset: have))
    }

    private func received(_ data: [UInt8], for id: UInt32) {
        guard let transfer = incoming[id] else {
            return link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id), which was not offered"))
        }
        guard transfer.received + UInt64(data.count) <= transfer.offer.size else {
            dropIncoming(id, deletingData: true)
            return refuse(id, .refused, "more data than the \(transfer.offer.size) bytes offered", name: transfer.offer.name)
        }
        let offset = transfer.received
        transfer.received += UInt64(data.count)
        diskBacklog += data.count
        if diskBacklog > FileTransfers.diskBacklogLimit { link.connection.pauseReading() }
        let queue = link.scheduler
        disk.execute { [self] in
            let failure = Self.write(data, to: transfer.fd, at: offset)
            if failure == nil { transfer.hash.update(data) }
            queue.execute { [self] in
                diskBacklog -= data.count
                if diskBacklog <= FileTransfers.diskBacklogLimit { link.connection.resumeReading() }
                if let failure, incoming[id] === transfer {
                    dropIncoming(id, deletingData: false)
                    refuse(id, .writeFailed, "writing to the inbox failed: \(failure)", name: transfer.offer.name)
                }
            }
        }
    }

    /// Writes all of `data` at `offset`; returns why it failed, or nil.
    private static func write(_ data: [UInt8], to fd: Int32, at offset: UInt64) -> String? {
        var written = 0
        while written < data.count {
            let count = data[written...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset) + off_t(written)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return String(cString: strerror(errno)) }
            written += count
        }
        return nil
    }

    private func ended(_ id: UInt32) {
        guard let transfer = incoming[id], let inbox else {
            return link.reject(ProtocolError(.fileProtocol, "FILE_END for id \(id), which was not offered"))
        }
        let name = transfer.offer.name
        guard transfer.received == transfer.offer.size else {
            dropIncoming(id, deletingData: false)
            return refuse(id, .refused, "the transfer ended after \(transfer.received) of \(transfer.offer.size) bytes", name: name)
        }
        let queue = link.scheduler
        // After the last write: the digest of everything written, then the data on disk.
        disk.execute { [self] in
            let digest = transfer.hash.finish()
            fsync(transfer.fd)
            queue.execute { [self] in
                guard incoming[id] === transfer else { return } // a write failed, or the link ended
                guard digest == transfer.offer.digest else {
                    dropIncoming(id, deletingData: true)
                    return refuse(id, .checksumMismatch, "the SHA-256 of the data received does not match the offer; nothing was stored", name: name)
                }
                dropIncoming(id, deletingData: false)
                do throws(FileError) {
                    let stored = try inbox.store(partial: transfer.partialPath, offeredName: name)
                    link.send(.fileResult(id: id, status: .stored, message: stored))
                    onEvent(.stored(SentFile(path: inbox.directory + "/" + stored, storedAs: stored, size: transfer.offer.size,
                                             startOffset: transfer.startOffset, digest: transfer.offer.digest)))
                } catch {
                    refuse(id, .writeFailed, error.message, name: name)
                }
            }
        }
    }

    private func dropIncoming(_ id: UInt32, deletingData: Bool) {
        guard let transfer = incoming.removeValue(forKey: id) else { return }
        disk.execute {  // after the writes still on their way
            close(transfer.fd)
            if deletingData { unlink(transfer.partialPath) }
        }
        inbox?.receiving.remove(transfer.offer.digest)
    }

    /// The link ended: pending sends fail, partial data is kept to be resumed.
    public func linkEnded(_ reason: PeerLink.EndReason) {
        for id in Array(incoming.keys) {
            let name = incoming[id]!.offer.name
            dropIncoming(id, deletingData: false)
            onEvent(.receiveFailed(name: name, reason: "\(reason); the data so far is kept, and sending the file again resumes"))
        }
        while !outgoing.isEmpty {
            let path = outgoing[0].path
            finishOutgoing(.failure(FileError("\(path) was not delivered: \(reason)")))
        }
    }
}
