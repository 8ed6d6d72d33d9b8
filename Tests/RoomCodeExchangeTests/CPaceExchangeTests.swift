import RoomCodeExchange
import TransportCore
import XCTest

/// Two in-memory parties run the whole exchange; every difference in what they were given, and
/// every change a relay makes on the way, fails confirmation on both sides.
final class CPaceExchangeTests: XCTestCase {
    struct Inputs {
        var code: RoomCode
        var channelIdentifier: [UInt8]
        var sessionID: [UInt8]
        var associatedData: [UInt8]
    }

    /// What a relay may do to each message on the way.
    struct Relay {
        var initiatorShare: ([UInt8]) -> [UInt8] = { $0 }
        var initiatorData: ([UInt8]) -> [UInt8] = { $0 }
        var responderShare: ([UInt8]) -> [UInt8] = { $0 }
        var responderData: ([UInt8]) -> [UInt8] = { $0 }
        var responderTag: ([UInt8]) -> [UInt8] = { $0 }
        var initiatorTag: ([UInt8]) -> [UInt8] = { $0 }
    }

    /// How one side ended.
    enum SideOutcome: Equatable {
        /// Confirmed; the ISK.
        case accepted([UInt8])
        /// Stopped on this error.
        case failed(RoomCodeError.Code)
        /// The other side stopped first and sent no tag.
        case gotNoTag
    }

    struct Outcome {
        var initiator: SideOutcome
        var responder: SideOutcome
    }

    let code = try! RoomCode(parsing: "4829-1530-7719")
    let otherCode = try! RoomCode(parsing: "4829-1530-7724")
    let keyA = PublicKeyFingerprint(bytes: [UInt8](repeating: 0xA1, count: 32))!
    let keyB = PublicKeyFingerprint(bytes: [UInt8](repeating: 0xB2, count: 32))!
    let keyM = PublicKeyFingerprint(bytes: [UInt8](repeating: 0x66, count: 32))!
    let sessionID = (0 ..< 32).map { UInt8($0) }

    func honest() -> Inputs {
        Inputs(code: code, channelIdentifier: CPace.channelIdentifier(initiatorKey: keyA, responderKey: keyB),
               sessionID: sessionID, associatedData: Array("svc room-code 1".utf8))
    }

    /// Runs both sides as far as each can go.
    func run(_ initiatorInputs: Inputs, _ responderInputs: Inputs, relay: Relay = Relay()) throws -> Outcome {
        let initiator = try CPace.Initiator(code: initiatorInputs.code, channelIdentifier: initiatorInputs.channelIdentifier,
                                            sessionID: initiatorInputs.sessionID, associatedData: initiatorInputs.associatedData)
        let responder = try CPace.Responder(code: responderInputs.code, channelIdentifier: responderInputs.channelIdentifier,
                                            sessionID: responderInputs.sessionID, associatedData: responderInputs.associatedData)
        let responderTag = Result { try responder.receive(initiatorShare: relay.initiatorShare(initiator.share),
                                                          initiatorAssociatedData: relay.initiatorData(initiator.associatedData)) }
        let initiatorTag = Result { try initiator.receive(responderShare: relay.responderShare(responder.share),
                                                          responderAssociatedData: relay.responderData(responder.associatedData)) }
        return Outcome(initiator: finish(ownTag: initiatorTag, peerTag: responderTag.map(relay.responderTag)) { try initiator.confirm(responderTag: $0) },
                       responder: finish(ownTag: responderTag, peerTag: initiatorTag.map(relay.initiatorTag)) { try responder.confirm(initiatorTag: $0) })
    }

    private func finish(ownTag: Result<[UInt8], Error>, peerTag: Result<[UInt8], Error>,
                        _ confirm: ([UInt8]) throws -> CPace.SessionKey) -> SideOutcome {
        if case .failure(let error) = ownTag { return .failed((error as? RoomCodeError)?.code ?? .libsodium) }
        guard case .success(let tag) = peerTag else { return .gotNoTag }
        do {
            return .accepted(try confirm(tag).withUnsafeBytes { Array($0) })
        } catch {
            return .failed((error as? RoomCodeError)?.code ?? .libsodium)
        }
    }

    /// Both sides end without a key: each stopped on one of `codes`, or got no tag because the
    /// other side stopped (`gotNoTag` allowed only when `codes` allows a share to be refused).
    func assertBothFail(_ outcome: Outcome, with codes: Set<RoomCodeError.Code> = [.confirmationFailed],
                        file: StaticString = #filePath, line: UInt = #line) {
        for (side, result) in [("initiator", outcome.initiator), ("responder", outcome.responder)] {
            switch result {
            case .accepted: XCTFail("the \(side) accepted", file: file, line: line)
            case .failed(let code): XCTAssertTrue(codes.contains(code), "\(side): \(code)", file: file, line: line)
            case .gotNoTag: XCTAssertTrue(codes.contains(.invalidShare), "\(side) got no tag", file: file, line: line)
            }
        }
        XCTAssertTrue([outcome.initiator, outcome.responder].contains { if case .failed = $0 { true } else { false } },
                      "one side at least refused", file: file, line: line)
    }

    func testSameInputsGiveEqualKeysOnBothSides() throws {
        let outcome = try run(honest(), honest())
        guard case .accepted(let initiatorKey) = outcome.initiator else { return XCTFail("initiator: \(outcome.initiator)") }
        XCTAssertEqual(initiatorKey.count, CPace.sessionKeyLength)
        XCTAssertEqual(outcome.responder, .accepted(initiatorKey))
        // A second run with the same inputs samples new scalars: a new key.
        XCTAssertNotEqual(try run(honest(), honest()).initiator, .accepted(initiatorKey))
    }

    func testDifferentCodeFailsBothSides() throws {
        var responder = honest()
        responder.code = otherCode
        assertBothFail(try run(honest(), responder))
    }

    func testDifferentSessionIDFailsBothSides() throws {
        // A relay that terminates TLS on both sides and forwards every byte unchanged: each side
        // exported its own session's keying material.
        var responder = honest()
        responder.sessionID[7] ^= 0x01
        assertBothFail(try run(honest(), responder))
    }

    func testDifferentChannelIdentifierFailsBothSides() throws {
        // A relay that showed its own key to the responder.
        var responder = honest()
        responder.channelIdentifier = CPace.channelIdentifier(initiatorKey: keyM, responderKey: keyB)
        assertBothFail(try run(honest(), responder))
        // Roles swapped.
        responder.channelIdentifier = CPace.channelIdentifier(initiatorKey: keyB, responderKey: keyA)
        assertBothFail(try run(honest(), responder))
    }

    func testChangedAssociatedDataFailsBothSides() throws {
        assertBothFail(try run(honest(), honest(), relay: Relay(initiatorData: { $0 + [0] })))
        assertBothFail(try run(honest(), honest(), relay: Relay(responderData: { var d = $0; d[0] ^= 0x80; return d })))
    }

    func testFlippedShareBitFailsBothSides() throws {
        // A flipped bit gives another valid element or an invalid encoding: refused either way.
        for bit in [0, 9, 100, 254] {
            let flip: ([UInt8]) -> [UInt8] = { var s = $0; s[bit / 8] ^= UInt8(1 << (bit % 8)); return s }
            assertBothFail(try run(honest(), honest(), relay: Relay(initiatorShare: flip)),
                           with: [.confirmationFailed, .invalidShare])
            assertBothFail(try run(honest(), honest(), relay: Relay(responderShare: flip)),
                           with: [.confirmationFailed, .invalidShare])
        }
    }

    func testFlippedTagBitFailsTheReceiver() throws {
        let flip: ([UInt8]) -> [UInt8] = { var t = $0; t[63] ^= 0x01; return t }
        let first = try run(honest(), honest(), relay: Relay(responderTag: flip))
        XCTAssertEqual(first.initiator, .failed(.confirmationFailed))
        let second = try run(honest(), honest(), relay: Relay(initiatorTag: flip))
        XCTAssertEqual(second.responder, .failed(.confirmationFailed))
    }

    /// A relay that does not know the code runs its own exchanges with both (a guess each), or
    /// swaps in its own share: both honest parties fail.
    func testRelaySubstitutingItsOwnSharesFailsBothSides() throws {
        var guess = honest()
        guess.code = otherCode
        let towardInitiator = try CPace.Responder(code: guess.code, channelIdentifier: guess.channelIdentifier,
                                                  sessionID: guess.sessionID, associatedData: guess.associatedData)
        let towardResponder = try CPace.Initiator(code: guess.code, channelIdentifier: guess.channelIdentifier,
                                                  sessionID: guess.sessionID, associatedData: guess.associatedData)
        let outcome = try run(honest(), honest(), relay: Relay(initiatorShare: { _ in towardResponder.share },
                                                               responderShare: { _ in towardInitiator.share }))
        assertBothFail(outcome)
    }

    func testChannelIdentifierLayout() {
        let identifier = CPace.channelIdentifier(initiatorKey: keyA, responderKey: keyB)
        XCTAssertEqual(identifier, [9] + Array("initiator".utf8) + [32] + keyA.bytes + [9] + Array("responder".utf8) + [32] + keyB.bytes)
        XCTAssertEqual(identifier.count, 86)
    }
}
