import RoomCodeExchange
import XCTest

/// Whatever a peer sends is refused with a clear error, never a trap, and ends the exchange.
final class CPaceHostileInputTests: XCTestCase {
    let sessionID = [UInt8](repeating: 0x5a, count: 32)
    let channelIdentifier = Array("ci".utf8)

    func responder() throws -> CPace.Responder {
        try CPace.Responder(code: RoomCode(parsing: "4829-1530-7719"), channelIdentifier: channelIdentifier, sessionID: sessionID)
    }

    func initiator() throws -> CPace.Initiator {
        try CPace.Initiator(code: RoomCode(parsing: "4829-1530-7719"), channelIdentifier: channelIdentifier, sessionID: sessionID)
    }

    func assertRefused(share: [UInt8], data: [UInt8] = [], as code: RoomCodeError.Code,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let responder = try responder()
        XCTAssertThrowsError(try responder.receive(initiatorShare: share, initiatorAssociatedData: data), file: file, line: line) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, code, "\($0)", file: file, line: line)
        }
        // The exchange is over: even a good tag is not looked at.
        XCTAssertThrowsError(try responder.confirm(initiatorTag: [UInt8](repeating: 0, count: CPace.tagLength)), file: file, line: line) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .misuse, file: file, line: line)
        }
        let initiator = try initiator()
        XCTAssertThrowsError(try initiator.receive(responderShare: share, responderAssociatedData: data), file: file, line: line) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, code, "\($0)", file: file, line: line)
        }
    }

    func testSharesOfWrongLengthAreRefused() throws {
        let valid = try initiator().share
        for length in [0, 1, 31, 33, 64, 1 << 16] {
            let share = (0 ..< length).map { valid[$0 % valid.count] }
            try assertRefused(share: share, as: .invalidShareLength)
        }
    }

    func testIdentityAndInvalidEncodingsAreRefused() throws {
        let p = hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f") // 2^255 - 19
        let nonCanonical = [
            p,
            hex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), // p + 1
            hex("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), // 2^255 - 1
            hex("0000000000000000000000000000000000000000000000000000000000000080"), // top bit set
            [UInt8](repeating: 0xff, count: 32),
        ]
        let negative = [ // odd field elements are "negative": never a ristretto255 encoding
            hex("0100000000000000000000000000000000000000000000000000000000000000"),
            hex("01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        ]
        for share in [[UInt8](repeating: 0, count: 32)] + nonCanonical + negative {
            try assertRefused(share: share, as: .invalidShare)
        }
    }

    func testOversizeAssociatedDataIsRefused() throws {
        let share = try initiator().share
        try assertRefused(share: share, data: [UInt8](repeating: 1, count: CPace.maximumAssociatedDataLength + 1), as: .invalidInput)
    }

    func testOwnShareSentBackIsRefused() throws {
        let initiator = try initiator()
        XCTAssertThrowsError(try initiator.receive(responderShare: initiator.share, responderAssociatedData: [])) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .reflectedShare)
        }
    }

    func testTagsOfWrongLengthOrAllZeroAreRefused() throws {
        for tag in [[], [UInt8](repeating: 0, count: 63), [UInt8](repeating: 0, count: 65), [UInt8](repeating: 0, count: 1 << 16)] {
            let (initiator, responder) = try exchangedShares()
            XCTAssertThrowsError(try initiator.confirm(responderTag: tag)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidTagLength)
            }
            XCTAssertThrowsError(try responder.confirm(initiatorTag: tag)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidTagLength)
            }
        }
        let (initiator, _) = try exchangedShares()
        XCTAssertThrowsError(try initiator.confirm(responderTag: [UInt8](repeating: 0, count: CPace.tagLength))) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .confirmationFailed)
        }
    }

    func testCallsOutOfOrderAreRefused() throws {
        let (initiator, responder) = try exchangedShares()
        XCTAssertThrowsError(try initiator.receive(responderShare: responder.share, responderAssociatedData: [])) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .misuse)
        }
        let fresh = try self.initiator()
        XCTAssertThrowsError(try fresh.confirm(responderTag: [UInt8](repeating: 0, count: CPace.tagLength))) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .misuse)
        }
    }

    func testLocalInputsOutOfBoundsAreRefused() throws {
        let code = try RoomCode(parsing: "4829-1530-7719")
        for badSessionID in [[], [UInt8](repeating: 1, count: CPace.minimumSessionIDLength - 1),
                             [UInt8](repeating: 1, count: CPace.maximumInputLength + 1)] {
            XCTAssertThrowsError(try CPace.Initiator(code: code, channelIdentifier: [], sessionID: badSessionID)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidInput)
            }
        }
        XCTAssertThrowsError(try CPace.Responder(password: [], channelIdentifier: [], sessionID: sessionID)) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try CPace.Responder(code: code, channelIdentifier: [UInt8](repeating: 0, count: CPace.maximumInputLength + 1),
                                                 sessionID: sessionID)) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try CPace.Responder(code: code, channelIdentifier: [], sessionID: sessionID,
                                                 associatedData: [UInt8](repeating: 0, count: CPace.maximumAssociatedDataLength + 1))) {
            XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidInput)
        }
    }

    /// An initiator and a responder that have taken each other's shares.
    func exchangedShares() throws -> (CPace.Initiator, CPace.Responder) {
        let initiator = try initiator()
        let responder = try responder()
        _ = try responder.receive(initiatorShare: initiator.share, initiatorAssociatedData: [])
        _ = try initiator.receive(responderShare: responder.share, responderAssociatedData: [])
        return (initiator, responder)
    }
}
