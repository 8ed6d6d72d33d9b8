/// Who is at the other end of a secure link: the SHA-256 of its public key in DER
/// SubjectPublicKeyInfo form (SPKI), the identity a member or publisher is known by.
///
/// Written as `SHA256:` and the 32 bytes in base64 without padding (43 characters, as ssh shows
/// host keys): the full form, which TXT records and `known_peers` carry. The short form, the
/// first 12 characters of the base64 text (72 bits), is for people to recognise a key in a list.
public struct PublicKeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the SHA-256.
    public let bytes: [UInt8]

    /// Returns nil unless `bytes` has 32 elements.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses the full form, with or without `SHA256:` (case-insensitive prefix); nil when it is
    /// anything else.
    public init?(_ text: some StringProtocol) {
        guard let bytes = Base64.decodeUnpadded(Self.dropPrefix(text)), bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses exactly the full form, `SHA256:` and 43 characters of base64, as a TXT record
    /// announces a key: nil for anything else (no lenient spellings of what a peer sends).
    public init?(fullForm text: String) {
        guard text.hasPrefix("SHA256:"), text.utf8.count == 50, let key = PublicKeyFingerprint(text) else { return nil }
        self = key
    }

    /// `SHA256:` and 43 characters of base64.
    public var full: String { "SHA256:" + base64 }

    /// The first 12 characters of the base64 text.
    public var short: String { String(base64.prefix(Self.shortLength)) }

    public var description: String { full }

    /// Characters of base64 in the short form.
    public static let shortLength = 12

    /// Whether `text` names this key: the full form, or at least the short form's 12 leading
    /// characters of its base64 text (with or without `SHA256:`).
    public func matches(_ text: some StringProtocol) -> Bool {
        let given = Self.dropPrefix(text)
        return given.count >= Self.shortLength && given.count <= 43 && base64.hasPrefix(given)
    }

    /// Whether `text` could be a whole or shortened fingerprint (see `matches`): for checking
    /// what a user typed before anything is connected.
    public static func isWellFormedPrefix(_ text: some StringProtocol) -> Bool {
        let given = dropPrefix(text)
        return given.count >= shortLength && given.count <= 43 && given.allSatisfy { Base64.alphabet.contains($0) }
            && (given.count < 43 || Base64.decodeUnpadded(given)?.count == 32)
    }

    private var base64: String { Base64.encodeUnpadded(bytes) }


    private static func dropPrefix(_ text: some StringProtocol) -> Substring {
        let text = Substring(text)
        return text.lowercased().hasPrefix("sha256:") ? text.dropFirst(7) : text
    }
}

/// What a secure link established: the peer's key and the safety code both ends of this one
/// session can read to each other (a relay in the middle holds two sessions with different codes).
public struct SecureSession: Sendable, Hashable {
    public let peerKey: PublicKeyFingerprint
    /// Twelve digits in groups of three, e.g. `482 193 057 331`.
    public let safetyCode: String
    /// This end's own key, as it presented it; nil where the session was made up without one.
    public let localKey: PublicKeyFingerprint?
    /// Keying material exported from the session for the room-code exchange (the CPace `sid`,
    /// label `EXPORTER-p2pm-room-code`, 32 bytes): equal at both ends of this session, different
    /// on the two sides of a relay. Empty where the session was made up without one.
    public let roomCodeSessionID: [UInt8]

    public init(peerKey: PublicKeyFingerprint, safetyCode: String, localKey: PublicKeyFingerprint? = nil, roomCodeSessionID: [UInt8] = []) {
        self.peerKey = peerKey
        self.safetyCode = safetyCode
        self.localKey = localKey
        self.roomCodeSessionID = roomCodeSessionID
    }

    /// The safety code from 8 bytes of keying material exported from the session: the bytes as a
    /// big-endian integer modulo 10^12, as twelve digits in groups of three.
    public static func safetyCode(fromExported bytes: [UInt8]) -> String? {
        guard bytes.count == 8 else { return nil }
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000_000_000
        let digits = String(value)
        let padded = String(repeating: "0", count: 12 - digits.count) + digits
        return stride(from: 0, to: 12, by: 3).map { start in
            String(padded.dropFirst(start).prefix(3))
        }.joined(separator: " ")
    }
}
