import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Both ends of a file transfer over an in-memory stream, with disk work on the same manual
/// scheduler: whole, resumed and corrupted transfers without sockets or threads.
final class FileTransfersTests: XCTestCase {
    /// One end: a link, its transfers and what they reported.
    final class Side {
        let stream: InMemoryStream
        let link: PeerLink
        let inbox: Inbox
        let files: FileTransfers
        var events: [FileTransfers.Event] = []
        var results: [Result<FileTransfers.SentFile, FileError>] = []

        init(_ stream: InMemoryStream, scheduler: ManualScheduler, inbox: Inbox) {
            self.stream = stream
            self.inbox = inbox
            link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
            var record: (FileTransfers.Event) -> Void = { _ in }
            files = FileTransfers(link: link, inbox: inbox, disk: scheduler, hashing: scheduler) { record($0) }
            record = { [unowned self] in events.append($0) }
            let files = files
            link.start(onMessage: { _ = files.handle($0) }, onEnd: { files.linkEnded($0) })
        }

        func send(_ path: String) {
            files.send(path: path) { [unowned self] in results.append($0) }
        }
    }

    let scheduler = ManualScheduler()
    var directory: TemporaryDirectory!
    var senderInbox: Inbox!
    var receiverInbox: Inbox!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        senderInbox = try Inbox(directory: directory.path + "/sender")
        receiverInbox = try Inbox(directory: directory.path + "/receiver")
    }

    func connect() -> (sender: Side, receiver: Side) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        return (Side(a, scheduler: scheduler, inbox: senderInbox), Side(b, scheduler: scheduler, inbox: receiverInbox))
    }

    /// 3 MiB and a bit: more than two full chunks, so frames of the maximum size go out.
    let content: [UInt8] = (0..<(3 << 20) + 12345).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }

    var partialDirectory: String { receiverInbox.directory + "/.partial" }

    func testAFileArrivesWholeAndVerified() throws {
        let source = directory.write(content, to: "photo.jpg")
        let (sender, receiver) = connect()
        var checker = FrameChecker()
        sender.stream.tap = { _ = checker.feed($0) }
        sender.send(source)
        scheduler.run()

        let sent = try XCTUnwrap(sender.results.first).get()
        XCTAssertEqual(sent.storedAs, "photo.jpg")
        XCTAssertEqual(sent.startOffset, 0)
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/photo.jpg"), content)
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [])
        XCTAssertTrue(checker.faults.isEmpty, "\(checker.faults)")
        XCTAssertGreaterThanOrEqual(checker.frameCount, 5)
        guard case .receiving(_, let size, let resumingAt) = receiver.events.first else { return XCTFail("\(receiver.events)") }
        XCTAssertEqual(size, UInt64(content.count))
        XCTAssertEqual(resumingAt, 0)
        XCTAssertLessThanOrEqual(sender.stream.peakBufferedByteCount, 4 << 20, "the sender reads from disk only as the outbox drains")
    }

    func testTheSameContentIsNotStoredTwiceAndAChangedFileIs() throws {
        let source = directory.write(content, to: "photo.jpg")
        let copy = directory.write(content, to: "copy of photo.jpg")
        let (sender, receiver) = connect()
        sender.send(source)
        sender.send(copy)
        scheduler.run()
        XCTAssertEqual(sender.results.count, 2)
        let again = try sender.results[1].get()
        XCTAssertEqual(again.storedAs, "photo.jpg", "answered with the file already there")
        XCTAssertEqual(again.bytesTransferred, 0)
        XCTAssertEqual(TemporaryDirectory.names(in: receiverInbox.directory), [".partial", "photo.jpg"])

        // Once the stored file changed, the content is received again.
        var changed = content
        changed[0] ^= 1
        directory.write(changed, to: "receiver/photo.jpg")
        sender.send(source)
        scheduler.run()
        XCTAssertEqual(try sender.results[2].get().storedAs, "photo (2).jpg")
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/photo (2).jpg"), content)
        XCTAssertEqual(receiver.events.count { if case .stored = $0 { true } else { false } }, 3)
    }

    /// (done, total) of each progress report going `direction`.
    func progress(_ events: [FileTransfers.Event], _ direction: FileTransfers.Direction) -> [UInt64] {
        events.compactMap {
            guard case .progress(let way, _, let done, let total) = $0, way == direction else { return nil }
            XCTAssertEqual(total, UInt64(content.count))
            return done
        }
    }

    func testBothSidesReportWhereTheyStartAndTheirProgress() throws {
        let source = directory.write(content, to: "film.mkv")
        let (sender, receiver) = connect()
        sender.send(source)
        scheduler.run()
        _ = try XCTUnwrap(sender.results.first).get()

        guard case .sending(let path, let size, let resumingAt) = sender.events.first else { return XCTFail("\(sender.events)") }
        XCTAssertEqual(path, source)
        XCTAssertEqual(size, UInt64(content.count))
        XCTAssertEqual(resumingAt, 0)
        for (side, direction) in [(sender, FileTransfers.Direction.sending), (receiver, .receiving)] {
            let reports = progress(side.events, direction)
            // 3 MiB and a bit in chunks of 1 MiB less 4 bytes: one report a chunk, the last complete.
            XCTAssertEqual(reports.count, 4, "\(direction): \(reports)")
            XCTAssertEqual(reports, reports.sorted(), "\(direction)")
            XCTAssertEqual(reports.last, UInt64(content.count), "\(direction)")
        }
        XCTAssertTrue(progress(sender.events, .receiving).isEmpty && progress(receiver.events, .sending).isEmpty, "each side reports its own direction")
        let receiverNames = receiver.events.compactMap { event -> String? in
            switch event {
            case .receiving(let name, _, _), .progress(_, let name, _, _): name
            default: nil
            }
        }
        XCTAssertEqual(Set(receiverNames), ["film.mkv"], "progress names the file as `receiving` did")
    }

    func testAResumedTransferSaysWhereItResumesOnBothSides() throws {
        let source = directory.write(content, to: "big.bin")
        let first = connect()
        first.sender.send(source)
        scheduler.run(atMost: 12)
        first.sender.stream.close()
        scheduler.run()
        let second = connect()
        second.sender.send(source)
        scheduler.run()
        let sent = try XCTUnwrap(second.sender.results.first).get()
        XCTAssertGreaterThan(sent.startOffset, 0)
        guard case .sending(_, _, let senderResumes) = second.sender.events.first,
              case .receiving(_, _, let receiverResumes) = second.receiver.events.first else {
            return XCTFail("\(second.sender.events) \(second.receiver.events)")
        }
        XCTAssertEqual(senderResumes, sent.startOffset)
        XCTAssertEqual(receiverResumes, sent.startOffset)
        XCTAssertTrue(progress(second.receiver.events, .receiving).allSatisfy { $0 > sent.startOffset })
        XCTAssertEqual(progress(second.sender.events, .sending).last, UInt64(content.count))
    }

    func testSendingAFIFOIsRefusedAtOnceInsteadOfWaitingForAWriter() throws {
        let fifo = directory.path + "/not-a-file"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let (sender, _) = connect()
        sender.send(fifo) // a blocking open would hang right here, on the link's thread
        scheduler.run()
        guard case .failure(let error) = try XCTUnwrap(sender.results.first) else { return XCTFail("a FIFO was sent") }
        XCTAssertEqual(error.message, "cannot send \(fifo): not a regular file")
    }

    func testABrokenTransferResumesWhereItStopped() throws {
        let source = directory.write(content, to: "big.bin")
        let first = connect()
        first.sender.send(source)
        scheduler.run(atMost: 12) // part of the data crosses, then the connection breaks
        first.sender.stream.close()
        scheduler.run()
        guard case .failure = first.sender.results.first else { return XCTFail("the broken transfer was reported as \(first.sender.results)") }
        let partials = TemporaryDirectory.names(in: partialDirectory)
        XCTAssertEqual(partials.count, 1)
        let kept = TemporaryDirectory.read(partialDirectory + "/" + (partials.first ?? "")) ?? []
        XCTAssertGreaterThan(kept.count, 0)
        XCTAssertLessThan(kept.count, content.count)

        let second = connect()
        second.sender.send(source)
        scheduler.run()
        let sent = try XCTUnwrap(second.sender.results.first).get()
        XCTAssertEqual(sent.startOffset, UInt64(kept.count))
        XCTAssertEqual(sent.bytesTransferred, UInt64(content.count - kept.count))
        XCTAssertEqual(TemporaryDirectory.read(receiverInbox.directory + "/big.bin"), content)
    }

    func testCorruptedPartialDataEndsInAChecksumMismatchAndNothingIsStored() throws {
        let source = directory.write(content, to: "doc.pdf")
        let hash = SHA256()
        hash.update(content)
        var partial = Array(content.prefix(100_000))
        partial[5000] ^= 0xFF
        // Where the receiver keeps data of this file from this sender (an in-memory peer has no address).
        let key = PartialKey(digest: hash.finish(), size: UInt64(content.count), sender: "an unknown address")
        directory.write(partial, to: "receiver/.partial/" + key.name)
        let (sender, receiver) = connect()
        sender.send(source)
        scheduler.run()

        guard case .failure(let error) = try XCTUnwrap(sender.results.first) else { return XCTFail("a corrupted file was stored") }
        XCTAssertTrue(error.message.contains("did not store"), error.message)
        XCTAssertTrue(receiver.events.contains { if case .receiveFailed = $0 { true } else { false } })
        XCTAssertEqual(TemporaryDirectory.names(in: receiverInbox.directory), [".partial"])
        XCTAssertEqual(TemporaryDirectory.names(in: partialDirectory), [], "the bad data is deleted, so that sending again starts over")
    }
}
