@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A receiver that never answers an offer, or never gives the result after the file's end
/// (review attacks16, finding 2), no longer keeps the sender waiting for ever: the transfer
/// ends after `answerTimeout` (plus, for the offer, the time a resume's hash may take), the
/// receiver is told with `FILE_CANCEL`, and a late answer is dropped without an error.
extension FileTransfersTests {
    /// A sender whose peer is a raw end that answers only what the test sends.
    func connectToSilentReceiver() -> (sender: Side, receiver: RawPeer) {
        let (a, b) = InMemoryStream.pair(scheduler: scheduler)
        let sender = Side(a, scheduler: scheduler, inbox: senderInbox)
        sender.files.answerTimeout = .seconds(5)
        return (sender, RawPeer(b))
    }

    func offerID(_ receiver: RawPeer) -> UInt32? {
        receiver.messages.lazy.compactMap { if case .fileOffer(let offer) = $0 { offer.id } else { nil } }.first
    }

    func cancels(_ receiver: RawPeer) -> [UInt32] {
        receiver.messages.compactMap { if case .fileCancel(let id, _) = $0 { id } else { nil } }
    }

    func testAnOfferNobodyAnswersFailsAfterTheAnswerTimeout() throws {
        let source = directory.write([1, 2, 3], to: "note.txt")
        let (sender, receiver) = connectToSilentReceiver()
        sender.send(source)
        scheduler.run()
        let id = try XCTUnwrap(offerID(receiver))
        // 5 s, plus 1 s for hashing what a resume kept of a file this small.
        scheduler.advance(by: .milliseconds(5900))
        XCTAssertTrue(sender.results.isEmpty, "the receiver still had time")
        scheduler.advance(by: .milliseconds(200))
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(error.message, "the receiver did not answer the offer of \(source) within 6 s; it was not delivered")
        XCTAssertEqual(cancels(receiver), [id])
        // The answer comes late, crossing the cancel: dropped, not answered as an error.
        _ = receiver.send(.fileAccept(id: id, offset: 0))
        scheduler.run()
        XCTAssertFalse(receiver.messages.contains { if case .error = $0 { true } else { false } }, "\(receiver.messages)")
        XCTAssertTrue(sender.link.isOpen)
    }

    func testAFileWhoseResultNeverComesFailsAfterTheAnswerTimeout() throws {
        let source = directory.write([UInt8](repeating: 7, count: 1000), to: "data.bin")
        let (sender, receiver) = connectToSilentReceiver()
        sender.send(source)
        scheduler.run()
        let id = try XCTUnwrap(offerID(receiver))
        _ = receiver.send(.fileAccept(id: id, offset: 0))
        scheduler.run()
        XCTAssertTrue(receiver.messages.contains { if case .fileEnd(id, _) = $0 { true } else { false } }, "all data and the end went")
        scheduler.advance(by: .milliseconds(4900))
        XCTAssertTrue(sender.results.isEmpty, "the receiver still had time")
        scheduler.advance(by: .milliseconds(200))
        guard case .failure(let error) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(error.message, "the receiver did not confirm \(source) within 5 s of its end; it may not have been stored: send it again")
        XCTAssertEqual(cancels(receiver), [id])
    }

    func testAnAnswerInTimeKeepsTheTransfer() throws {
        let source = directory.write([UInt8](repeating: 7, count: 1000), to: "data.bin")
        let (sender, receiver) = connectToSilentReceiver()
        sender.send(source)
        scheduler.run()
        let id = try XCTUnwrap(offerID(receiver))
        scheduler.advance(by: .seconds(4))
        _ = receiver.send(.fileAccept(id: id, offset: 0))
        scheduler.advance(by: .seconds(4)) // past the offer's deadline: answered, it no longer counts
        _ = receiver.send(.fileResult(id: id, status: .stored, message: "data.bin"))
        scheduler.run()
        guard case .success(let sent) = sender.results.first else { return XCTFail("\(sender.results)") }
        XCTAssertEqual(sent.storedAs, "data.bin")
        XCTAssertEqual(cancels(receiver), [])
    }
}
