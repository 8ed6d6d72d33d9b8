import TransportCore

/// CPace (draft-irtf-cfrg-cpace-21), the CFRG's balanced PAKE, over ristretto255 with SHA-512
/// (CPACE-RISTR255-SHA512), initiator-responder, with explicit key confirmation both ways: how
/// two parties that know the same short room code prove it to each other. A peer that does not
/// know the code learns nothing it could test offline; each run is one guess.
///
/// The exchange, three messages:
/// ```
/// initiator                                      responder
/// Initiator(code:…) -> share Ya
///            ---------- Ya, ADa ------------->    Responder(code:…) -> share Yb
///                                                 receive(initiatorShare: Ya, …) -> Tb
///            <--------- Yb, ADb, Tb ----------
/// receive(responderShare: Yb, …) -> Ta
/// confirm(responderTag: Tb) -> ISK
///            ---------- Ta ------------------>    confirm(initiatorTag: Ta) -> ISK
/// ```
/// The initiator checks `Tb` before it sends `Ta`; a party that fails sends no tag.
///
/// ## Binding to the TLS session (how the session layer is meant to call it)
/// - `sessionID` (the draft's `sid`): keying material exported from the live TLS 1.3 session,
///   `SSL_export_keying_material` with the label `CPace.exporterLabel`, no context,
///   `CPace.exporterLength` bytes. It is equal on both ends of one TLS session and differs on
///   the two sides of a relay that terminates TLS, so a relay that forwards every byte of the
///   exchange unchanged still fails confirmation on both sides.
/// - `channelIdentifier` (`CI`): both parties' key fingerprints with their roles,
///   `CPace.channelIdentifier(initiatorKey:responderKey:)`: the initiator (svc-connect, the TLS
///   client) first, the responder (svc-publish, the TLS server) second, each the SHA-256 of the
///   key its TLS peer presented. A key substituted by a relay changes CI on one side.
/// - `associatedData` (`ADa`, `ADb`): sent in the clear and authenticated by the transcript;
///   a protocol version, or empty.
/// - The code is the password (`PRS`): `RoomCode.passwordBytes`.
///
/// Secrets (the scalar, K, the MAC key, the ISK) live in wiped buffers; the code itself and the
/// generator string are wiped where this module holds them.
public enum CPace {
    /// The length of a share (`Ya`, `Yb`): an encoded ristretto255 element.
    public static let shareLength = 32
    /// The length of a confirmation tag (`Ta`, `Tb`): HMAC-SHA-512.
    public static let tagLength = 64
    /// The length of the ISK: SHA-512.
    public static let sessionKeyLength = 64
    /// The shortest session id accepted: the exchange must be bound to a session.
    public static let minimumSessionIDLength = 16
    /// The longest code, channel identifier or session id accepted.
    public static let maximumInputLength = 1024
    /// The longest associated data accepted, ours or the peer's.
    public static let maximumAssociatedDataLength = 1024
    /// The TLS exporter label the session id should come from.
    public static let exporterLabel = "EXPORTER-p2pm-room-code"
    /// How many bytes of keying material the session id should be.
    public static let exporterLength = 32
    /// The prefix of the MAC key's hash input (draft §10.4).
    static let macKeyLabel: [UInt8] = Array("CPaceMac".utf8)

    /// The channel identifier that binds an exchange to both parties' keys and roles:
    /// `lv_cat(b"initiator", initiatorKey, b"responder", responderKey)` with each key the 32
    /// bytes of its SHA-256 fingerprint (86 bytes in all).
    public static func channelIdentifier(initiatorKey: PublicKeyFingerprint, responderKey: PublicKeyFingerprint) -> [UInt8] {
        CPaceEncoding.lvCat(Array("initiator".utf8), initiatorKey.bytes, Array("responder".utf8), responderKey.bytes)
    }

    static func checkLocalInputs(password: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8]) throws {
        guard !password.isEmpty, password.count <= maximumInputLength else {
            throw RoomCodeError(.invalidInput, "the room code is \(password.count) bytes; it must have 1 to \(maximumInputLength)")
        }
        guard channelIdentifier.count <= maximumInputLength else {
            throw RoomCodeError(.invalidInput, "the channel identifier is \(channelIdentifier.count) bytes; at most \(maximumInputLength) are accepted")
        }
        guard sessionID.count >= minimumSessionIDLength, sessionID.count <= maximumInputLength else {
            throw RoomCodeError(.invalidInput, "the session id is \(sessionID.count) bytes; it must have \(minimumSessionIDLength) to \(maximumInputLength) (export it from the TLS session: CPace.exporterLabel)")
        }
        guard associatedData.count <= maximumAssociatedDataLength else {
            throw RoomCodeError(.invalidInput, "the associated data is \(associatedData.count) bytes; at most \(maximumAssociatedDataLength) are accepted")
        }
    }
}
