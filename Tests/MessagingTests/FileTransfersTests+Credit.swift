@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A relayed file's data goes only as far as the room's `FILE_CREDIT`: a room that accepts and
/// then grants nothing more no longer keeps the sender waiting for ever (the heartbeat keeps
/// the link up meanwhile). After `creditTimeout` without new credit, while data waits to be
/// sent, the transfer ends as not delivered and the room is told with `FILE_CANCEL`; time the
/// sender's own outbox took does not count, and every grant starts the wait again.
extension FileTransfersTests {
    /// A sender of relayed files whose room is a raw end that answers only what the test sends.
    func connectToScriptedRoom() -> (sender: Side, room: RawPeer) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        return (Side(a, scheduler: scheduler, inbox: senderInbox), RawPeer(b))
    }

    /// Advances the clock in steps, the room pinging at each so the link's heartbeat is content.
    func advance(by duration: Duration, pinging room: RawPeer) {
        var left = duration
        while left > .zero {
            let step = min(left, .seconds(5))
            _ = room.send(.ping(token: 1))
            scheduler.advance(by: step)
            left -= step
        }
    }

    /// The peer reads 4 KiB every `interval`, `rounds` times, pinging meanwhile.
    func readSlowly(_ peer: RawPeer, rounds: Int, every interval: Duration) {
        for _ in 0..<rounds {
            advance(by: interval, pinging: peer)
            peer.stream.readBudget = 4096
            peer.stream.resumeReading()
            scheduler.run()
        }
    }

    func relayedOfferID(_ room: RawPeer) -> UInt32? {
        room.messages.lazy.compactMap { if case .fileOfferTo(let offer, "bob") = $0 { offer.id } else { nil } }.first
    }

    /// The data bytes the room received for `id`.
    func dataReceived(_ room: RawPeer, id: UInt32) -> Int {
        room.messages.reduce(0) { total, message in
            if case .fileChunk(id, let data) = message { total + data.count } else { total }
        }
    }

    func cancelReasons(_ room: RawPeer) -> [String] {
        room.messages.compactMap { if case .fileCancel(_, let reason) = $0 { reason } else { nil } }
    }

    /// Offers a file to bob through the scripted room, which accepts it and grants 512 KiB.
    func sendToBobWithTheFirstCredit() throws -> (source: String, sender: Side, room: RawPeer, id: UInt32) {
        let source = directory.write(content, to: "big.bin")
        let (sender, room) = connectToScriptedRoom()
        sender.files.send(path: source, to: "bob") { [unowned sender] in sender.results.append($0) }
        scheduler.run()
        let id = try XCTUnwrap(relayedOfferID(room), "\(room.messages)")
        _ = room.send(.fileAccept(id: id, offset: 0))
        _ = room.send(.fileCredit(id: id, through: 512 << 10))
        scheduler.run()
        return (source, sender, room, id)
    }

    func testARelayedFileThatGetsNoMoreCreditFailsAfterTheCreditTimeout() throws {
        let (source, sender, room, id) = try sendToBobWithTheFirstCredit()
        XCTAssertEqual(dataReceived(room, id: id), 512 << 10, "data goes as far as the credit")

        // Just short of the bound, a grant: the wait starts again from it.
        advance(by: FileTransfers.creditTimeout - .seconds(1), pinging: room)
        XCTAssertTrue(sender.results.isEmpty, "the room still had time")
        _ = room.send(.fileCredit(id: id, through: 1 << 20))
        scheduler.run()
        XCTAssertEqual(dataReceived(room, id: id), 1 << 20)
        advance(by: FileTransfers.creditTimeout - .seconds(1), pinging: room)
        XCTAssertTrue(sender.results.isEmpty, "the grant started the wait again: \(sender.results)")
        XCTAssertEqual(cancelReasons(room), [])

        advance(by: .seconds(2), pinging: room)
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        let bound = FileTransfers.creditTimeout.secondsText
        XCTAssertEqual(error.message, "the room let no more of \(source) go to bob for \(bound) (no FILE_CREDIT after \(1 << 20) of its \(content.count) bytes), "
                       + "though it neither ended the transfer nor dropped the recipient; it was not delivered: the room may be overloaded or faulty; send it again to resume, or ask the room's publisher")
        XCTAssertEqual(cancelReasons(room), ["no FILE_CREDIT came within \(bound) after \(1 << 20) of the \(content.count) bytes"])
        XCTAssertEqual(sender.results.count, 1)

        // A late grant and a late result cross the cancel: dropped, not answered as errors.
        _ = room.send(.fileCredit(id: id, through: UInt64(content.count)))
        _ = room.send(.fileResult(id: id, status: .refused, message: "too late"))
        scheduler.run()
        XCTAssertEqual(dataReceived(room, id: id), 1 << 20, "nothing more was sent")
        XCTAssertFalse(room.messages.contains { if case .error = $0 { true } else { false } }, "\(room.messages)")
        XCTAssertTrue(sender.link.isOpen)
        XCTAssertEqual(sender.results.count, 1)
    }

    func testTimeTheSendersOwnOutboxTakesIsNotChargedToTheRoom() throws {
        let source = directory.write(content, to: "big.bin")
        let (sender, room) = connectToScriptedRoom()
        sender.files.send(path: source, to: "bob") { [unowned sender] in sender.results.append($0) }
        scheduler.run()
        let id = try XCTUnwrap(relayedOfferID(room))
        // The room grants the whole file but reads only 4 KiB every 50 s (less often would be
        // a room that reads nothing, which closes the link: FileTransfersTests+Outbox): the
        // sender waits for its outbox, with credit left, far longer than the bound.
        room.stream.pauseReading()
        _ = room.send(.fileAccept(id: id, offset: 0))
        _ = room.send(.fileCredit(id: id, through: UInt64(content.count) - 1000))
        scheduler.run()
        readSlowly(room, rounds: 7, every: .seconds(50))
        XCTAssertTrue(sender.results.isEmpty, "waiting for its own outbox is not waiting for credit: \(sender.results)")
        XCTAssertLessThan(dataReceived(room, id: id), content.count - 1000, "the outbox still held data")
        // It reads again: the data goes as far as the credit, and only now the wait for the
        // last 1000 bytes' credit begins.
        room.stream.resumeReading()
        scheduler.run()
        XCTAssertEqual(dataReceived(room, id: id), content.count - 1000)
        advance(by: FileTransfers.creditTimeout - .seconds(1), pinging: room)
        XCTAssertTrue(sender.results.isEmpty, "\(sender.results)")
        _ = room.send(.fileCredit(id: id, through: UInt64(content.count)))
        scheduler.run()
        XCTAssertEqual(dataReceived(room, id: id), content.count)
        XCTAssertTrue(room.messages.contains { if case .fileEnd(id, _) = $0 { true } else { false } }, "all data and the end went")
        _ = room.send(.fileResult(id: id, status: .stored, message: "big.bin"))
        scheduler.run()
        guard case .success(let sent) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(sent.storedAs, "big.bin")
        XCTAssertEqual(cancelReasons(room), [])
    }

    /// A room that grants a byte at a time just before each bound (review attacks17: a file
    /// held 21 minutes for 9 bytes) does not start the wait again: only a grant of
    /// `creditStep` (or the rest of the file) does, as a working room's relay grants.
    func testCreditTrickledInTinyStepsDoesNotHoldTheFileForEver() throws {
        let (source, sender, room, id) = try sendToBobWithTheFirstCredit()
        var through: UInt64 = 512 << 10
        for _ in 0..<2 {
            advance(by: FileTransfers.creditTimeout / 3, pinging: room)
            through += FileTransfers.creditStep - 1
            _ = room.send(.fileCredit(id: id, through: through))
            scheduler.run()
        }
        XCTAssertEqual(dataReceived(room, id: id), Int(through), "small grants are still used")
        XCTAssertTrue(sender.results.isEmpty, "\(sender.results)")
        advance(by: FileTransfers.creditTimeout / 3 + .seconds(2), pinging: room)
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertTrue(error.message.hasPrefix("the room let no more of \(source) go to bob"), error.message)
        XCTAssertEqual(sender.results.count, 1)
    }
}
