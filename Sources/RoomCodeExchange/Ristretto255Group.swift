/// The group environment G_Ristretto255 of draft-irtf-cfrg-cpace-21 §8.3, with H = SHA-512
/// (the cipher suite CPACE-RISTR255-SHA512), over libsodium.
enum Ristretto255Group {
    /// `G.DSI`: `b"CPaceRistretto255"`.
    static let domainSeparator: [UInt8] = Array("CPaceRistretto255".utf8)
    /// `G.DSI || b"_ISK"`, the first field hashed into the ISK.
    static let keyDomainSeparator: [UInt8] = domainSeparator + Array("_ISK".utf8)
    /// The length of an encoded element (a share, K, the generator).
    static let elementLength = 32
    /// The length of a scalar.
    static let scalarLength = 32
    /// `H.s_in_bytes` of SHA-512: its input block is 128 bytes.
    static let hashBlockLength = 128

    /// `G.calculate_generator(H, PRS, CI, sid)`: SHA-512 of the generator string (64 bytes,
    /// `2 * field_size_bytes`), then the element derivation of RFC 9496
    /// (`crypto_core_ristretto255_from_hash`). Returns the generator's encoding (libsodium
    /// multiplies encoded elements; decoding it again gives the same element).
    static func calculateGenerator(password: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8]) -> [UInt8]? {
        var generatorString = CPaceEncoding.generatorString(dsi: domainSeparator, prs: password,
                                                           channelIdentifier: channelIdentifier, sessionID: sessionID,
                                                           hashBlockLength: hashBlockLength)
        var hash = Sodium.sha512(generatorString)
        Sodium.wipe(&generatorString)
        defer { Sodium.wipe(&hash) }
        return Sodium.ristretto255FromHash(hash)
    }

    /// `G.sample_scalar()`: uniform between 1 and the group order less one (the draft's
    /// alternative to clearing the top bits of 32 random bytes; libsodium's sampler).
    static func sampleScalar() -> SecretBuffer {
        let scalar = SecretBuffer(count: scalarLength)
        Sodium.randomScalar(into: scalar)
        return scalar
    }

    /// `G.scalar_mult(y, g)`: the encoding of `y * g` for the generator `g`; nil only if the
    /// product were the identity, which a generator from the hash and a nonzero scalar never give.
    static func scalarMult(_ scalar: SecretBuffer, generator: [UInt8]) -> [UInt8]? {
        Sodium.ristretto255ScalarMult(scalar, generator)
    }

    /// `G.scalar_mult_vfy(y, X)`: the encoding of `y * decode(X)`, or nil where the draft
    /// returns `G.I`: `X` is not 32 bytes, not a canonical encoding, or the identity (whose
    /// product is the identity, for which libsodium returns -1).
    static func scalarMultVerified(_ scalar: SecretBuffer, _ encoded: [UInt8]) -> [UInt8]? {
        Sodium.ristretto255ScalarMult(scalar, encoded)
    }
}
