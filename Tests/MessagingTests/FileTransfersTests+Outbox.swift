@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A file's data waits in the sender's own outbox while the peer does not read it. A peer that
/// accepted the file and keeps pinging (the heartbeat is content) but never reads no longer
/// holds the file, and all after it, for ever: after `answerTimeout` in which the outbox took
/// nothing, the link is closed (`ERROR too-slow`) and the file reported not delivered. A slow
/// peer that reads is never cut off, and the wait for the result after `FILE_END` starts only
/// once `FILE_END` has left the outbox.
extension FileTransfersTests {
    /// A sender of a file to a raw peer that accepts it at 0 and then stops reading: the
    /// sender's outbox fills to its target and stays so.
    func acceptAndStopReading(_ name: String) throws -> (sender: Side, peer: RawPeer, source: String) {
        let source = directory.write(content, to: name)
        let (sender, peer) = connectToScriptedRoom()
        sender.send(source)
        scheduler.run()
        let id = try XCTUnwrap(peer.messages.lazy.compactMap { if case .fileOffer(let offer) = $0 { offer.id } else { nil } }.first,
                               "\(peer.messages)")
        peer.stream.pauseReading()
        _ = peer.send(.fileAccept(id: id, offset: 0))
        scheduler.run()
        XCTAssertGreaterThanOrEqual(sender.stream.bufferedByteCount, FileTransfers.outboxTarget, "the outbox is at its target")
        return (sender, peer, source)
    }

    func testAPeerThatAcceptsAFileAndNeverReadsItIsCutOffAfterTheAnswerTimeout() throws {
        let (sender, peer, source) = try acceptAndStopReading("never read.bin")
        var stalls: [Duration] = []
        sender.files.onOutboxStall = { stalls.append($0) }
        let timeout = sender.files.answerTimeout

        advance(by: timeout - .seconds(1), pinging: peer)
        XCTAssertTrue(sender.results.isEmpty, "the peer still had time: \(sender.results)")
        XCTAssertTrue(sender.link.isOpen)
        advance(by: .seconds(5), pinging: peer) // the bound, and the link's 1 s closing grace

        XCTAssertEqual(stalls, [timeout])
        XCTAssertFalse(sender.link.isOpen)
        XCTAssertNotNil(sender.stream.closeReason, "closed, though the peer never read its ERROR")
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(error.message, "\(source) was not delivered: the other end read nothing of the data waiting to be sent for 60 s "
                       + "(never read.bin: \(2 * FileTransfers.chunkSize) of its \(content.count) bytes queued), though it kept the connection up; "
                       + "the connection was closed; send it again to resume")
        XCTAssertEqual(sender.results.count, 1)
    }

    func testASlowPeerThatReadsIsNeverCutOff() throws {
        let (sender, peer, _) = try acceptAndStopReading("slow.bin")
        // 4 KiB every 59 s: never once a drain to the mark in the whole time, yet the outbox
        // moves within every 60 s, so the time starts again at each check.
        readSlowly(peer, rounds: 12, every: .seconds(59))
        XCTAssertTrue(sender.results.isEmpty, "\(sender.results)")
        XCTAssertTrue(sender.link.isOpen)
        // It reads again: the file goes whole, and is confirmed.
        peer.stream.resumeReading()
        scheduler.run()
        let id = try XCTUnwrap(peer.messages.lazy.compactMap { if case .fileEnd(let id, _) = $0 { id } else { nil } }.first)
        _ = peer.send(.fileResult(id: id, status: .stored, message: "slow.bin"))
        scheduler.run()
        guard case .success(let sent) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(sent.storedAs, "slow.bin")
    }

    func testTheWaitForTheResultStartsOnceTheEndHasLeftTheOutbox() throws {
        let (sender, peer, source) = try acceptAndStopReading("end.bin")
        let timeout = sender.files.answerTimeout
        // 256 KiB every 50 s: the last data and FILE_END are queued long before they leave.
        var endQueuedAt: ContinuousClock.Instant?
        var endArrivedAt: ContinuousClock.Instant?
        while endArrivedAt == nil {
            advance(by: .seconds(50), pinging: peer)
            peer.stream.readBudget = 256 << 10
            peer.stream.resumeReading()
            scheduler.run()
            if endQueuedAt == nil, sender.files.outgoingEnded { endQueuedAt = scheduler.now }
            if peer.messages.contains(where: { if case .fileEnd = $0 { true } else { false } }) { endArrivedAt = scheduler.now }
        }
        let queuedAt = try XCTUnwrap(endQueuedAt)
        XCTAssertGreaterThan(try XCTUnwrap(endArrivedAt) - queuedAt, timeout, "FILE_END waited in the outbox longer than the answer timeout")
        XCTAssertTrue(sender.results.isEmpty, "the receiver's time starts only now: \(sender.results)")

        advance(by: timeout - .seconds(1), pinging: peer)
        XCTAssertTrue(sender.results.isEmpty, "\(sender.results)")
        peer.stream.resumeReading()
        advance(by: .seconds(2), pinging: peer)
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(error.message, "the receiver did not confirm \(source) within 60 s of its end; it may not have been stored: send it again")
        XCTAssertTrue(sender.link.isOpen, "an unanswered end is the peer's, not the outbox's: the link stays")
    }
}

extension FileTransfers {
    /// Whether the current outgoing file has sent all its data and its end (for tests).
    var outgoingEnded: Bool { outgoing.first?.state == .ended }
}
