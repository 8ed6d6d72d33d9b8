/// One party's side of a CPace exchange in the initiator-responder setting, with explicit key
/// confirmation (draft-irtf-cfrg-cpace-21 §7.2 and §10.4); `CPace.Initiator` and
/// `CPace.Responder` are its two faces.
///
/// A state machine: waiting for the peer's share, then for the peer's tag, then finished or
/// failed. Any failure wipes every secret and ends it; a call out of order throws `.misuse`.
///
/// - Important: Not `Sendable`: one session drives it.
final class CPaceExchange {
    enum Role {
        case initiator
        case responder

        var name: String { self == .initiator ? "initiator" : "responder" }
        var peerName: String { self == .initiator ? "responder" : "initiator" }
    }

    private enum State {
        case awaitingPeerShare
        case awaitingPeerTag
        case finished
        case failed
    }

    let role: Role
    /// This party's share, `Ya` or `Yb`: 32 bytes.
    let share: [UInt8]
    /// This party's associated data, `ADa` or `ADb`.
    let associatedData: [UInt8]
    private let sessionID: [UInt8]
    private var state = State.awaitingPeerShare
    /// `ya` or `yb`; wiped as soon as K is computed.
    private let scalar: SecretBuffer
    /// The ISK, held until the peer's tag is checked.
    private var sessionKey: SecretBuffer?
    /// The tag the peer must send.
    private var expectedPeerTag: SecretBuffer?

    /// Computes the generator and this party's share.
    ///
    /// - Parameter scalar: the secret scalar; `nil` samples one (tests pass the draft's).
    init(role: Role, password: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8],
         scalar: SecretBuffer? = nil) throws {
        try Sodium.ready()
        try CPace.checkLocalInputs(password: password, channelIdentifier: channelIdentifier,
                                   sessionID: sessionID, associatedData: associatedData)
        self.role = role
        self.sessionID = sessionID
        self.associatedData = associatedData
        let secret = scalar ?? Ristretto255Group.sampleScalar()
        self.scalar = secret
        guard var generator = Ristretto255Group.calculateGenerator(password: password, channelIdentifier: channelIdentifier,
                                                                   sessionID: sessionID) else {
            throw RoomCodeError(.libsodium, "libsodium could not derive the CPace generator (crypto_core_ristretto255_from_hash failed)")
        }
        defer { Sodium.wipe(&generator) }
        guard let share = Ristretto255Group.scalarMult(secret, generator: generator) else {
            throw RoomCodeError(.libsodium, "libsodium could not compute this party's CPace share (crypto_scalarmult_ristretto255 failed)")
        }
        self.share = share
    }

    /// Takes the peer's share and associated data, derives the ISK and both confirmation tags,
    /// and returns this party's tag to send.
    func receive(peerShare: [UInt8], peerAssociatedData: [UInt8]) throws -> [UInt8] {
        guard state == .awaitingPeerShare else { throw misuse("the peer's share was already taken") }
        do {
            return try derive(peerShare: peerShare, peerAssociatedData: peerAssociatedData)
        } catch {
            fail()
            throw error
        }
    }

    private func derive(peerShare: [UInt8], peerAssociatedData: [UInt8]) throws -> [UInt8] {
        guard peerAssociatedData.count <= CPace.maximumAssociatedDataLength else {
            throw RoomCodeError(.invalidInput, "the \(role.peerName)'s associated data is \(peerAssociatedData.count) bytes; at most \(CPace.maximumAssociatedDataLength) are accepted")
        }
        guard peerShare.count == CPace.shareLength else {
            throw RoomCodeError(.invalidShareLength, "the \(role.peerName)'s CPace share is \(peerShare.count) bytes, not \(CPace.shareLength): it is not an svc peer or the message was cut or changed")
        }
        guard peerShare != share else {
            throw RoomCodeError(.reflectedShare, "the \(role.peerName) sent back this \(role.name)'s own CPace share: someone is reflecting the exchange")
        }
        guard var secretPoint = Ristretto255Group.scalarMultVerified(scalar, peerShare) else {
            let what = peerShare.allSatisfy({ $0 == 0 }) ? "the identity element" : "not a valid ristretto255 encoding"
            throw RoomCodeError(.invalidShare, "the \(role.peerName)'s CPace share is \(what): the exchange is refused (draft-irtf-cfrg-cpace §7.2: abort when K = G.I)")
        }
        scalar.wipe()
        defer { Sodium.wipe(&secretPoint) }

        let transcript = role == .initiator
            ? CPaceEncoding.transcriptIR(initiatorShare: share, initiatorData: associatedData,
                                         responderShare: peerShare, responderData: peerAssociatedData)
            : CPaceEncoding.transcriptIR(initiatorShare: peerShare, initiatorData: peerAssociatedData,
                                         responderShare: share, responderData: associatedData)
        // ISK = H.hash(lv_cat(G.DSI || b"_ISK", sid, K) || transcript_ir(Ya, ADa, Yb, ADb))
        var keyInput = CPaceEncoding.lvCat(Ristretto255Group.keyDomainSeparator, sessionID, secretPoint) + transcript
        var keyBytes = Sodium.sha512(keyInput)
        Sodium.wipe(&keyInput)
        // mac_key = H.hash(b"CPaceMac" || sid || ISK)
        var macInput = CPace.macKeyLabel + sessionID + keyBytes
        var macKeyBytes = Sodium.sha512(macInput)
        Sodium.wipe(&macInput)
        let sessionKey = SecretBuffer(taking: &keyBytes)
        let macKey = SecretBuffer(taking: &macKeyBytes)
        // Ta = MAC(mac_key, lv_cat(Ya, ADa)), Tb = MAC(mac_key, lv_cat(Yb, ADb))
        let ownTag = Sodium.hmacSHA512(key: macKey, CPaceEncoding.lvCat(share, associatedData))
        var peerTag = Sodium.hmacSHA512(key: macKey, CPaceEncoding.lvCat(peerShare, peerAssociatedData))
        macKey.wipe()
        self.sessionKey = sessionKey
        expectedPeerTag = SecretBuffer(taking: &peerTag)
        state = .awaitingPeerTag
        return ownTag
    }

    /// Checks the peer's confirmation tag in constant time; on success hands over the ISK.
    func confirm(peerTag: [UInt8]) throws -> CPace.SessionKey {
        guard state == .awaitingPeerTag, let sessionKey, let expectedPeerTag else {
            throw misuse(state == .awaitingPeerShare ? "the peer's share must come before its tag" : "the peer's tag was already checked")
        }
        guard peerTag.count == CPace.tagLength else {
            fail()
            throw RoomCodeError(.invalidTagLength, "the \(role.peerName)'s confirmation tag is \(peerTag.count) bytes, not \(CPace.tagLength): it is not an svc peer or the message was cut or changed")
        }
        guard Sodium.constantTimeEqual(expectedPeerTag, peerTag) else {
            fail()
            throw RoomCodeError(.confirmationFailed, "the \(role.peerName) did not prove knowledge of the room code: the codes differ, or the exchange was relayed or changed on the way")
        }
        expectedPeerTag.wipe()
        self.expectedPeerTag = nil
        self.sessionKey = nil
        state = .finished
        return CPace.SessionKey(sessionKey)
    }

    private func misuse(_ what: String) -> RoomCodeError {
        let reason = switch state {
        case .failed: "the exchange already failed"
        case .finished: "the exchange already finished"
        default: what
        }
        return RoomCodeError(.misuse, "CPace \(role.name) called out of order: \(reason) (start a new exchange)")
    }

    /// Wipes every secret and ends the exchange.
    private func fail() {
        scalar.wipe()
        sessionKey?.wipe()
        expectedPeerTag?.wipe()
        sessionKey = nil
        expectedPeerTag = nil
        state = .failed
    }
}
