import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// What an attack review of streamed files found (issue 14): receiving waited behind a long
/// outgoing read, a resume's prefix hash ran into the receiver's stall timer, the resume tag
/// missed rewrites that set the time back, empty chunks queued work for free, and a second
/// "stored" answer was taken while the first was confirmed.
extension FileTransfersStreamedTests {
    /// A member's link whose outgoing reads run on `hashing` (a scheduler nobody runs: a read
    /// that does not end), answering a raw room that speaks first.
    func memberWithStuckReads(_ hashing: ManualScheduler, roomCapabilities: Message.Capabilities)
        -> (peer: RawPeer, link: PeerLink, files: FileTransfers, texts: () -> [String]) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let peer = RawPeer(a)
        let link = PeerLink(b, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let files = FileTransfers(link: link, inbox: receiverInbox, disk: scheduler, hashing: hashing) { _ in }
        var texts: [String] = []
        link.start(onMessage: { message in
            if !files.handle(message), case .text(_, _, let text) = message { texts.append(text) }
        }, onEnd: { files.linkEnded($0) })
        link.send(.hello(.init(name: "member")))
        peer.send(.hello(.init(capabilities: roomCapabilities, name: "room")))
        scheduler.run()
        return (peer, link, files, { texts })
    }

    func testAnOutgoingFileReadAtLengthDoesNotStopIncomingDataTextsOrPings() throws {
        let stuck = ManualScheduler()
        // An older room: the outgoing file is hashed whole before its offer, on `stuck`.
        let (peer, link, files, texts) = memberWithStuckReads(stuck, roomCapabilities: .beforeStreamedFiles)
        XCTAssertFalse(link.usesStreamedFiles)
        files.send(path: directory.write(content, to: "out.bin")) { _ in }
        scheduler.run()
        XCTAssertEqual(stuck.pendingJobCount, 1, "the outgoing file is being read")

        // 12 MiB come in, more than the 8 MiB backlog that stops reading, with texts between.
        let size = 12 << 20
        let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        peer.send(.fileOffer(.init(id: 1, size: UInt64(size), digest: Self.sha256(data), name: "in.bin")))
        scheduler.run()
        for (index, start) in stride(from: 0, to: size, by: 1 << 20).enumerated() {
            peer.send(.fileChunk(id: 1, data: data[start..<start + (512 << 10)]))
            peer.send(.fileChunk(id: 1, data: data[start + (512 << 10)..<start + (1 << 20)]))
            peer.send(.text(from: "room", to: "member", text: "text \(index)"))
            scheduler.run()
        }
        peer.send(.ping(token: 42))
        peer.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()

        XCTAssertEqual(texts(), (0..<12).map { "text \($0)" }, "every text arrived while the outgoing read went on")
        XCTAssertTrue(peer.messages.contains(.pong(token: 42)), "the ping was answered")
        XCTAssertEqual(results(peer).first?.0, .stored, "\(results(peer))")
        XCTAssertTrue(TemporaryDirectory.read(receiverInbox.directory + "/in.bin") == data, "stored whole")
        XCTAssertEqual(stuck.pendingJobCount, 1, "the outgoing read is still going on")
    }

    /// Leaves `count` bytes of a streamed offer of `size` as partial data, as a broken link does.
    func keepPartial(of size: Int, count: Int) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let peer = RawPeer(a)
        receivers.append(Receiver(b, scheduler: scheduler, inbox: receiverInbox))
        peer.send(.hello(.init(capabilities: .all, name: "sender")))
        scheduler.run()
        offer(peer, size: size)
        var sent = 0
        while sent < count { // a chunk at a time, as the receiver's backlog drains
            let size = min(512 << 10, count - sent)
            XCTAssertTrue(peer.send(.fileChunk(id: 1, data: ArraySlice(repeating: 3, count: size))))
            sent += size
            scheduler.run()
        }
        a.close()
        scheduler.run()
    }

    /// An inbox that ends a transfer after 5 s without data (the raw peers answer no pings,
    /// so a test stays within the links' heartbeat).
    func useQuickInbox() throws {
        var limits = Inbox.Limits()
        limits.transferIdleTimeout = .seconds(5)
        receiverInbox = try Inbox(directory: directory.path + "/quick", limits: limits)
    }

    func testAResumedStreamedTransferGivesTheSenderTimeToHashThePrefixThenEndsAnAcceptThatBringsNothing() throws {
        try useQuickInbox()
        let kept = 20 << 20
        keepPartial(of: 32 << 20, count: kept)
        let (peer, _) = rawSender()
        offer(peer, size: 32 << 20)
        XCTAssertTrue(peer.messages.contains(.fileAccept(id: 1, offset: UInt64(kept))), "\(results(peer))")
        // 5 s, plus 20 MiB at 8 MiB/s rounded down, plus 1 s: 8 s.
        XCTAssertEqual(FileTransfers.resumeAllowance(skipping: UInt64(kept), idleTimeout: .seconds(5)), .seconds(8))
        XCTAssertEqual(FileTransfers.resumeAllowance(skipping: 6_000_000_000, idleTimeout: .seconds(60)), .seconds(776))
        scheduler.advance(by: .seconds(7))
        XCTAssertTrue(results(peer).isEmpty, "the idle timeout alone does not end a resume whose sender hashes: \(results(peer))")
        scheduler.advance(by: .seconds(2))
        XCTAssertEqual(results(peer).first?.0, .refused)
        XCTAssertTrue(results(peer).first?.1.contains("no data arrived for 8") == true, "\(results(peer))")
    }

    func testAfterTheFirstChunkOfAResumeTheIdleTimeoutIsTheUsualOne() throws {
        try useQuickInbox()
        keepPartial(of: 32 << 20, count: 20 << 20)
        let (peer, _) = rawSender()
        offer(peer, size: 32 << 20)
        scheduler.advance(by: .seconds(4))
        for _ in 0..<2 { peer.send(.fileChunk(id: 1, data: ArraySlice(repeating: 3, count: 512 << 10))) } // 1 MiB: progress
        scheduler.run()
        scheduler.advance(by: .seconds(5)) // the first wait (8 s) ended with progress: 5 s more
        XCTAssertTrue(results(peer).isEmpty, "\(results(peer))")
        scheduler.advance(by: .seconds(5))
        XCTAssertTrue(results(peer).first?.1.contains("no data arrived for 5") == true, "\(results(peer))")
    }

    func testARewriteOfTheSameSizeWithItsOldModificationTimeGetsANewResumeTag() throws {
        let path = directory.write(content, to: "a.bin")
        var before = stat()
        XCTAssertEqual(stat(path, &before), 0)
        let first = FileTransfers.resumeTag(ofFileAt: path)
        usleep(20_000) // a later change time, whatever the file system's tick
        var changed = content
        changed[5] ^= 0xFF
        directory.write(changed, to: "a.bin")
        var times = [before.st_atim, before.st_mtim] // what `touch -r` and `cp -p` do
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        var after = stat()
        XCTAssertEqual(stat(path, &after), 0)
        XCTAssertEqual(after.st_ino, before.st_ino, "rewritten in place")
        XCTAssertEqual(after.st_mtim.tv_sec, before.st_mtim.tv_sec)
        XCTAssertEqual(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec)
        XCTAssertNotEqual(FileTransfers.resumeTag(ofFileAt: path), first)
    }

    /// A svc sender whose outgoing reads run on `hashing`, and a raw receiver after both HELLOs.
    func senderToRawReceiver(hashing: ManualScheduler? = nil) -> (FileTransfers, RawPeer) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let link = PeerLink(a, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let files = FileTransfers(link: link, inbox: nil, disk: scheduler, hashing: hashing ?? scheduler) { _ in }
        link.start(onMessage: { _ = files.handle($0) }, onEnd: { files.linkEnded($0) })
        link.send(.hello(.init(name: "sender")))
        let peer = RawPeer(b)
        peer.send(.hello(.init(capabilities: .all, name: "receiver")))
        scheduler.run()
        return (files, peer)
    }

    func offeredID(_ peer: RawPeer) -> UInt32? {
        peer.messages.lazy.compactMap { if case .fileOffer(let offer) = $0 { offer.id } else { nil } }.first
    }

    func testAStoredAtOnceAnswerNamesTheDigestAndTheSenderReportsOnlyThatOne() throws {
        let source = directory.write(content, to: "photo.jpg")
        let (files, peer) = senderToRawReceiver()
        var result: Result<FileTransfers.SentFile, FileError>?
        files.send(path: source) { result = $0 }
        scheduler.run()
        let id = try XCTUnwrap(offeredID(peer))
        peer.send(.fileResult(id: id, status: .stored, message: hexString(contentDigest) + " photo (2).jpg"))
        scheduler.run()
        let sent = try XCTUnwrap(result).get()
        XCTAssertEqual(sent.storedAs, "photo (2).jpg")
        XCTAssertEqual(sent.digest, contentDigest)
        XCTAssertEqual(sent.bytesTransferred, 0)
    }

    func testAStoredAtOnceAnswerWithAnotherDigestIsReportedAsNotSent() throws {
        let source = directory.write(content, to: "photo.jpg")
        let (files, peer) = senderToRawReceiver()
        var result: Result<FileTransfers.SentFile, FileError>?
        files.send(path: source) { result = $0 }
        scheduler.run()
        let other = Self.sha256([1, 2, 3])
        peer.send(.fileResult(id: try XCTUnwrap(offeredID(peer)), status: .stored, message: hexString(other) + " photo.jpg"))
        scheduler.run()
        guard case .failure(let error) = result else { return XCTFail("reported as \(String(describing: result))") }
        XCTAssertTrue(error.message.contains(hexString(other)) && error.message.contains(hexString(contentDigest)), error.message)
        XCTAssertTrue(error.message.contains("nothing was sent"), error.message)
    }

    func testAStoredAtOnceAnswerWithoutADigestIsAProtocolError() throws {
        let (files, peer) = senderToRawReceiver()
        var result: Result<FileTransfers.SentFile, FileError>?
        files.send(path: directory.write(content, to: "photo.jpg")) { result = $0 }
        scheduler.run()
        peer.send(.fileResult(id: try XCTUnwrap(offeredID(peer)), status: .stored, message: "photo.jpg"))
        scheduler.run()
        guard case .failure = result else { return XCTFail("reported as \(String(describing: result))") }
        XCTAssertTrue(errors(peer).contains { $0.contains("lacks the SHA-256") }, "\(errors(peer))")
    }

    func testASecondStoredAnswerWhileTheFirstIsConfirmedIsAProtocolError() throws {
        let stuck = ManualScheduler()
        let (files, peer) = senderToRawReceiver(hashing: stuck)
        var results: [Result<FileTransfers.SentFile, FileError>] = []
        files.send(path: directory.write(content, to: "photo.jpg")) { results.append($0) }
        scheduler.run()
        let id = try XCTUnwrap(offeredID(peer))
        peer.send(.fileResult(id: id, status: .stored, message: hexString(contentDigest) + " photo.jpg"))
        scheduler.run()
        peer.send(.fileResult(id: id, status: .stored, message: "photo.jpg"))
        scheduler.run()
        XCTAssertTrue(results.isEmpty, "\(results)")
        XCTAssertTrue(errors(peer).contains { $0.contains("FILE_RESULT for id \(id)") }, "\(errors(peer))")
        while stuck.run() > 0 || scheduler.run() > 0 {}
        XCTAssertEqual(results.count, 1)
        XCTAssertEqual(try XCTUnwrap(results.first).get().digest, contentDigest)
    }

    func testAnEmptyChunkIsAProtocolError() {
        let (peer, _) = rawSender()
        offer(peer, size: 10)
        peer.send(.fileChunk(id: 1, data: []))
        scheduler.run()
        XCTAssertTrue(errors(peer).contains { $0.contains("is empty") }, "\(errors(peer))")
    }

    /// A raw sender and a receiver into `inbox` whose writes run on `disk` only when the test
    /// runs it, after both HELLOs.
    func rawSender(into inbox: Inbox, disk: ManualScheduler) -> (peer: RawPeer, files: FileTransfers) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let peer = RawPeer(a)
        let link = PeerLink(b, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let files = FileTransfers(link: link, inbox: inbox, disk: disk, hashing: scheduler) { _ in }
        link.start(onMessage: { _ = files.handle($0) }, onEnd: { files.linkEnded($0) })
        link.send(.hello(.init(name: "receiver")))
        peer.send(.hello(.init(capabilities: .all, name: "sender")))
        scheduler.run()
        return (peer, files)
    }

    func testTinyChunksCountAtLeastTheMinimumSoQueuedWorkIsBoundedByCount() {
        let stuckDisk = ManualScheduler()
        let (peer, files) = rawSender(into: receiverInbox, disk: stuckDisk)
        offer(peer, size: 10_000)
        for _ in 0..<5_000 { peer.send(.fileChunk(id: 1, data: [9])) }
        scheduler.run()
        let most = FileTransfers.diskBacklogLimit / FileTransfers.minimumChunkCost + 1
        XCTAssertGreaterThan(files.diskBacklog, FileTransfers.diskBacklogLimit, "reading stopped at the limit")
        XCTAssertLessThanOrEqual(files.diskBacklog, (most + 1) * FileTransfers.minimumChunkCost)
        XCTAssertLessThanOrEqual(stuckDisk.pendingJobCount, 2 * (most + 1), "a write and a hash per chunk, no more")
    }
}
