import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Files between peers that both announce `.streamedFiles`: offered under a resume tag before
/// they are hashed, hashed while sent, and checked whole against the SHA-256 in `FILE_END`;
/// and what a hostile sender can do with that (wrong, missing or repeated ends, data after the
/// end, sizes at the limits, swapped resumed data).
final class FileTransfersStreamedTests: XCTestCase {
    let scheduler = ManualScheduler()
    var directory: TemporaryDirectory!
    var receiverInbox: Inbox!
    var partialDirectory: String { receiverInbox.directory + "/.partial" }
    /// 2 MiB and a bit: more than two chunks.
    let content: [UInt8] = (0..<(2 << 20) + 777).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }
    var contentDigest: [UInt8] { Self.sha256(content) }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        let hash = SHA256()
        hash.update(bytes)
        return hash.finish()
    }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        receiverInbox = try Inbox(directory: directory.path + "/receiver")
    }

    /// A receiving end with an inbox, which said HELLO with every capability.
    final class Receiver {
        let link: PeerLink
        let files: FileTransfers
        var events: [FileTransfers.Event] = []

        init(_ stream: InMemoryStream, scheduler: ManualScheduler, inbox: Inbox) {
            link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
            var record: (FileTransfers.Event) -> Void = { _ in }
            files = FileTransfers(link: link, inbox: inbox, disk: scheduler, hashing: scheduler) { record($0) }
            record = { [unowned self] in events.append($0) }
            let files = files
            link.start(onMessage: { _ = files.handle($0) }, onEnd: { files.linkEnded($0) })
            link.send(.hello(.init(name: "receiver")))
        }

        var stored: [FileTransfers.SentFile] { events.compactMap { if case .stored(let file) = $0 { file } else { nil } } }
    }

    /// A hostile sender speaking raw frames to a `Receiver`, after both HELLOs.
    func rawSender(capabilities: Message.Capabilities = .all) -> (RawPeer, Receiver) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let peer = RawPeer(a)
        let receiver = Receiver(b, scheduler: scheduler, inbox: receiverInbox)
        receivers.append(receiver)
        peer.send(.hello(.init(capabilities: capabilities, name: "sender")))
        scheduler.run()
        return (peer, receiver)
    }

    let tag = [UInt8](repeating: 0x5A, count: 32)
    /// Every receiver made, kept alive to the end of the test (their events refer to them).
    var receivers: [Receiver] = []

    func offer(_ peer: RawPeer, size: Int, id: UInt32 = 1, name: String = "data.bin") {
        peer.send(.fileOffer(.init(id: id, size: UInt64(size), digest: tag, name: name)))
        scheduler.run()
    }

    /// Sends `data` as FILE_CHUNKs of 512 KiB (a frame holds at most 1 MiB).
    func sendData(_ peer: RawPeer, _ data: ArraySlice<UInt8>, id: UInt32 = 1) {
        var rest = data
        while !rest.isEmpty {
            XCTAssertTrue(peer.send(.fileChunk(id: id, data: rest.prefix(512 << 10))))
            rest = rest.dropFirst(512 << 10)
        }
    }

    func results(_ peer: RawPeer) -> [(Message.FileStatus, String)] {
        peer.messages.compactMap { if case .fileResult(_, let status, let text) = $0 { (status, text) } else { nil } }
    }

    func errors(_ peer: RawPeer) -> [String] {
        peer.messages.compactMap { if case .error(_, let text) = $0 { text } else { nil } }
    }

    // MARK: Both ends svc

    func testAStreamedFileIsOfferedByTagBeforeAnyHashAndItsDigestComesWithTheEnd() throws {
        let source = directory.write(content, to: "photo.jpg")
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let receiver = Receiver(b, scheduler: scheduler, inbox: receiverInbox)
        let link = PeerLink(a, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let sender = FileTransfers(link: link, inbox: nil, disk: scheduler, hashing: scheduler) { _ in }
        link.start(onMessage: { _ = sender.handle($0) }, onEnd: { sender.linkEnded($0) })
        var sent: [Message] = []
        var decoder = FrameDecoder(maximumPayload: Frame.maximumPayload)
        a.tap = { bytes in
            decoder.feed(bytes)
            while let frame = try? decoder.next() { if let message = try? Message(decoding: frame) { sent.append(message) } }
        }
        link.send(.hello(.init(name: "sender")))
        scheduler.run()
        XCTAssertTrue(link.usesStreamedFiles)
        var result: Result<FileTransfers.SentFile, FileError>?
        sender.send(path: source) { result = $0 }
        scheduler.run()

        let file = try XCTUnwrap(result).get()
        XCTAssertEqual(file.digest, contentDigest, "the sender hashed what it sent")
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/photo.jpg"), content)
        XCTAssertEqual(receiver.stored.first?.digest, contentDigest)
        guard case .fileOffer(let offer) = sent.first(where: { if case .fileOffer = $0 { true } else { false } }) else { return XCTFail("\(sent)") }
        XCTAssertNotEqual(offer.digest, contentDigest, "the offer names the file by its resume tag")
        XCTAssertEqual(offer.size, UInt64(content.count))
        XCTAssertEqual(sent.last, .fileEnd(id: offer.id, digest: contentDigest))
    }

    func testTheSameUnchangedFileAgainIsAnsweredStoredAtOnceAndReportedWithItsDigest() throws {
        let source = directory.write(content, to: "photo.jpg")
        let first = connect()
        first.send(source)
        scheduler.run()
        XCTAssertEqual(try XCTUnwrap(first.results.first).get().bytesTransferred, UInt64(content.count))
        first.send(source)
        scheduler.run()
        let again = try XCTUnwrap(first.results.last).get()
        XCTAssertEqual(again.storedAs, "photo.jpg")
        XCTAssertEqual(again.bytesTransferred, 0)
        XCTAssertEqual(again.digest, contentDigest)
        XCTAssertEqual(receivers.last?.stored.last?.digest, contentDigest)
        XCTAssertEqual(TemporaryDirectory.names(in: receiverInbox.directory), [".partial", "photo.jpg"])
    }

    func testTheResumeTagStaysWhileTheFileIsUnchangedAndChangesWithIt() throws {
        let path = directory.write(content, to: "a.bin")
        let first = try FileTransfers.openForSending(path)
        close(first.fd)
        let again = try FileTransfers.openForSending(path)
        close(again.fd)
        XCTAssertEqual(first.tag, again.tag)
        XCTAssertEqual(first.tag.count, 32)
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        let touched = try FileTransfers.openForSending(path)
        close(touched.fd)
        XCTAssertNotEqual(touched.tag, first.tag)
    }

    /// A sending end (svc), after both HELLOs with every capability.
    final class Sender {
        let stream: InMemoryStream
        let link: PeerLink
        let files: FileTransfers
        var results: [Result<FileTransfers.SentFile, FileError>] = []

        init(_ stream: InMemoryStream, scheduler: ManualScheduler) {
            self.stream = stream
            link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
            files = FileTransfers(link: link, inbox: nil, disk: scheduler, hashing: scheduler) { _ in }
            let files = files
            link.start(onMessage: { _ = files.handle($0) }, onEnd: { files.linkEnded($0) })
            link.send(.hello(.init(name: "sender")))
        }

        func send(_ path: String) { files.send(path: path) { [unowned self] in results.append($0) } }
    }

    func connect() -> Sender {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let sender = Sender(a, scheduler: scheduler)
        receivers.append(Receiver(b, scheduler: scheduler, inbox: receiverInbox))
        scheduler.run()
        return sender
    }

    /// Runs until some of the file reached the receiver's partial data, then breaks the connection.
    func breakMidway(_ sender: Sender) {
        for _ in 0..<10_000 {
            let kept = TemporaryDirectory.names(in: partialDirectory).first.flatMap { TemporaryDirectory.read(partialDirectory + "/" + $0) }
            if let kept, !kept.isEmpty { break }
            guard scheduler.run(atMost: 1) > 0 else { break }
        }
        sender.stream.close()
        scheduler.run()
    }

    func testABrokenStreamedTransferResumesAndTheSenderHashesTheDataBeforeTheOffset() throws {
        let source = directory.write(content, to: "big.bin")
        let first = connect()
        first.send(source)
        breakMidway(first)
        scheduler.run()
        guard case .failure = first.results.first else { return XCTFail("the broken transfer was reported as \(first.results)") }
        let partials = TemporaryDirectory.names(in: partialDirectory)
        XCTAssertEqual(partials.count, 1)
        let kept = TemporaryDirectory.read(partialDirectory + "/" + (partials.first ?? "")) ?? []
        XCTAssertGreaterThan(kept.count, 0)
        XCTAssertLessThan(kept.count, content.count)

        let second = connect()
        second.send(source)
        scheduler.run()
        let sent = try XCTUnwrap(second.results.first).get()
        XCTAssertEqual(sent.startOffset, UInt64(kept.count))
        XCTAssertEqual(sent.digest, contentDigest, "the digest covers the resumed prefix too")
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/big.bin"), content)
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [])
    }

    func testAFileChangedBetweenTwoTriesStartsOverUnderItsNewTag() throws {
        let source = directory.write(content, to: "doc.bin")
        let first = connect()
        first.send(source)
        breakMidway(first)
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory).count, 1)
        var changed = content
        changed[0] ^= 1
        directory.write(changed, to: "doc.bin")
        var times = [timespec(tv_sec: 2_000_000, tv_nsec: 0), timespec(tv_sec: 2_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, source, &times, 0), 0)

        let second = connect()
        second.send(source)
        scheduler.run()
        let sent = try XCTUnwrap(second.results.first).get()
        XCTAssertEqual(sent.startOffset, 0, "a changed file is another tag: nothing to resume")
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/doc.bin"), changed)
    }

    // MARK: A hostile sender

    func testADigestMismatchAtTheEndStoresNothingAndRemovesThePartialData() {
        let (peer, receiver) = rawSender()
        offer(peer, size: 100)
        peer.send(.fileChunk(id: 1, data: ArraySlice(repeating: 7, count: 100)))
        peer.send(.fileEnd(id: 1, digest: Self.sha256([UInt8](repeating: 8, count: 100))))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .checksumMismatch, "\(peer.messages)")
        XCTAssertTrue(results(peer).first?.1.contains("nothing was stored") == true)
        XCTAssertEqual(TemporaryDirectory.names(in: receiverInbox.directory), [".partial"])
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [], "the partial data is discarded")
        XCTAssertTrue(receiver.stored.isEmpty)
    }

    func testAnEndWithoutTheDigestIsAProtocolErrorAndStoresNothing() {
        let (peer, receiver) = rawSender()
        offer(peer, size: 3)
        peer.send(.fileChunk(id: 1, data: [1, 2, 3]))
        peer.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertTrue(errors(peer).contains { $0.contains("lacks the file's SHA-256") }, "\(peer.messages)")
        XCTAssertTrue(results(peer).isEmpty)
        XCTAssertTrue(receiver.stored.isEmpty)
        // The transfer stays open: a proper end still stores it.
        peer.send(.fileEnd(id: 1, digest: Self.sha256([1, 2, 3])))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .stored)
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/data.bin"), [1, 2, 3])
    }

    func testAnEndWithADigestFromAPeerThatDoesNotStreamIsAProtocolError() {
        let (peer, receiver) = rawSender(capabilities: .beforeStreamedFiles)
        let digest = Self.sha256([1, 2, 3])
        peer.send(.fileOffer(.init(id: 1, size: 3, digest: digest, name: "old.bin")))
        peer.send(.fileChunk(id: 1, data: [1, 2, 3]))
        peer.send(.fileEnd(id: 1, digest: digest))
        scheduler.run()
        XCTAssertTrue(errors(peer).contains { $0.contains("its offer named the digest already") }, "\(peer.messages)")
        XCTAssertTrue(receiver.stored.isEmpty)
        peer.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .stored, "an older peer's files still arrive")
    }

    func testChunksAfterTheEndAndASecondEndAreProtocolErrors() {
        let (peer, receiver) = rawSender()
        offer(peer, size: 3)
        peer.send(.fileChunk(id: 1, data: [1, 2, 3]))
        peer.send(.fileEnd(id: 1, digest: Self.sha256([1, 2, 3])))
        peer.send(.fileChunk(id: 1, data: [4]))
        peer.send(.fileEnd(id: 1, digest: Self.sha256([1, 2, 3])))
        scheduler.run()
        XCTAssertEqual(errors(peer).count, 2, "\(peer.messages)")
        XCTAssertTrue(errors(peer).allSatisfy { $0.contains("not an accepted transfer still open") })
        XCTAssertEqual(results(peer).map(\.0), [.stored])
        XCTAssertEqual(receiver.stored.count, 1)
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/data.bin"), [1, 2, 3])
    }

    func testAnEmptyFileIsStoredAgainstTheDigestOfNothing() {
        let (peer, receiver) = rawSender()
        offer(peer, size: 0, name: "empty")
        peer.send(.fileEnd(id: 1, digest: Self.sha256([])))
        scheduler.run()
        XCTAssertEqual(results(peer).map(\.0), [.stored], "\(peer.messages)")
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/empty"), [])
        XCTAssertEqual(receiver.stored.first?.size, 0)
    }

    func testSizesPastWhatAFileCanHoldAndDataPastTheSizeAreRefused() {
        let (peer, _) = rawSender()
        peer.send(.fileOffer(.init(id: 1, size: .max, digest: tag, name: "huge")))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .refused)
        XCTAssertTrue(results(peer).first?.1.contains("larger than any file") == true, "\(peer.messages)")

        offer(peer, size: 2, id: 2)
        peer.send(.fileChunk(id: 2, data: [1, 2, 3]))
        scheduler.run()
        XCTAssertEqual(results(peer).last?.0, .refused)
        XCTAssertTrue(results(peer).last?.1.contains("more data than") == true, "\(peer.messages)")
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [])
    }

    /// The partial data a streamed offer from this (address-less, in-memory) sender resumes.
    func partialKey(size: Int) -> PartialKey {
        PartialKey(digest: tag, size: UInt64(size), sender: "an unknown address")
    }

    func testResumedDataIsCheckedWithTheRestAndSwappedContentIsDiscarded() {
        // The sender claims the partial data, then sends the rest of different content: the
        // whole file does not match the digest it gives.
        directory.write(Array(content.prefix(1000)), to: "receiver/.partial/" + partialKey(size: content.count).name)
        let (peer, receiver) = rawSender()
        offer(peer, size: content.count)
        XCTAssertTrue(peer.messages.contains(.fileAccept(id: 1, offset: 1000)), "\(peer.messages)")
        var other = content
        other[10] ^= 1
        sendData(peer, other[1000...])
        peer.send(.fileEnd(id: 1, digest: Self.sha256(other)))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .checksumMismatch, "\(peer.messages)")
        XCTAssertTrue(receiver.stored.isEmpty)
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [])
    }

    func testResumedDataThatMatchesIsStoredWhole() {
        directory.write(Array(content.prefix(1000)), to: "receiver/.partial/" + partialKey(size: content.count).name)
        let (peer, receiver) = rawSender()
        offer(peer, size: content.count)
        sendData(peer, content[1000...])
        peer.send(.fileEnd(id: 1, digest: contentDigest))
        scheduler.run()
        XCTAssertEqual(results(peer).first?.0, .stored, "\(peer.messages)")
        XCTAssertEqual(receiver.stored.first?.startOffset, 1000)
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/data.bin"), content)
    }

    func testPartialDataLongerThanTheOfferIsNotResumed() {
        directory.write([UInt8](repeating: 1, count: 50), to: "receiver/.partial/" + partialKey(size: 10).name)
        let (peer, _) = rawSender()
        offer(peer, size: 10)
        XCTAssertTrue(peer.messages.contains(.fileAccept(id: 1, offset: 0)), "\(peer.messages)")
    }

    // MARK: A hostile receiver

    /// A sender with no inbox and a raw receiver advertising `capabilities`, after both HELLOs.
    func rawReceiver(capabilities: Message.Capabilities = .all) -> (receiver: RawPeer, link: PeerLink, sender: FileTransfers) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let receiver = RawPeer(b)
        let link = PeerLink(a, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let sender = FileTransfers(link: link, inbox: nil, disk: scheduler, hashing: scheduler) { _ in }
        link.start(onMessage: { _ = sender.handle($0) }, onEnd: { sender.linkEnded($0) })
        link.send(.hello(.init(name: "sender")))
        receiver.send(.hello(.init(capabilities: capabilities, name: "receiver")))
        scheduler.run()
        return (receiver, link, sender)
    }

    func testAReceiverThatClaimsAStreamedFileStoredWhileItsDataIsUnderWayIsNotBelieved() throws {
        let source = directory.write(content, to: "claimed.bin")
        let (receiver, _, sender) = rawReceiver()
        var result: Result<FileTransfers.SentFile, FileError>?
        sender.send(path: source) { result = $0 }
        scheduler.run()
        guard case .fileOffer(let offer) = receiver.messages.last else { return XCTFail("\(receiver.messages)") }
        receiver.send(.fileAccept(id: offer.id, offset: 0))
        receiver.send(.fileResult(id: offer.id, status: .stored, message: "claimed.bin"))
        scheduler.run()
        guard case .failure(let error) = try XCTUnwrap(result) else { return XCTFail("a claim before the end was believed") }
        XCTAssertTrue(error.message.contains("before it was sent"), error.message)
    }

    /// The same without resume tags (a receiver that does not stream): a "stored" while data
    /// is still to be sent was believed, and the file reported sent and verified although
    /// only part of it had left (review attacks17).
    func testAReceiverThatClaimsAFileStoredWhileItsDataIsUnderWayIsNotBelievedWithoutStreamingEither() throws {
        let source = directory.write(content, to: "claimed.bin")
        let (receiver, link, sender) = rawReceiver(capabilities: Message.Capabilities.all.subtracting(.streamedFiles))
        XCTAssertFalse(link.usesStreamedFiles)
        var result: Result<FileTransfers.SentFile, FileError>?
        sender.send(path: source) { result = $0 }
        scheduler.run()
        guard case .fileOffer(let offer) = receiver.messages.last else { return XCTFail("\(receiver.messages)") }
        receiver.isPaused = true
        receiver.send(.fileAccept(id: offer.id, offset: 0))
        receiver.send(.fileResult(id: offer.id, status: .stored, message: "claimed.bin"))
        scheduler.run()
        guard case .failure(let error) = try XCTUnwrap(result) else { return XCTFail("a claim before the end was believed: \(String(describing: result))") }
        XCTAssertTrue(error.message.contains("before it was sent"), error.message)
    }

    func testAnAcceptPastTheSizeIsRefusedBySender() throws {
        let source = directory.write([1, 2, 3], to: "small.bin")
        let (receiver, _, sender) = rawReceiver()
        sender.send(path: source) { _ in }
        scheduler.run()
        guard case .fileOffer(let offer) = receiver.messages.last else { return XCTFail("\(receiver.messages)") }
        receiver.send(.fileAccept(id: offer.id, offset: 4))
        scheduler.run()
        XCTAssertTrue(receiver.messages.contains { if case .error = $0 { true } else { false } }, "\(receiver.messages)")
        XCTAssertFalse(receiver.messages.contains { if case .fileChunk = $0 { true } else { false } })
    }
}
