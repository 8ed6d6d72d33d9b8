import CSodium

/// The libsodium calls the room-code exchange makes, each with its lengths fixed by the caller's
/// types: SHA-512, ristretto255 (element derivation, scalar multiplication, random scalars),
/// HMAC-SHA-512 with a 64-byte key, constant-time comparison and wiping.
///
/// Every entry point of the module calls `ready()` first: libsodium's random source and its
/// CPU dispatch are set up by `sodium_init`, which runs once per process.
enum Sodium {
    /// The result of `sodium_init` (0 first time, 1 when already done, -1 on failure), run once.
    private static let initialised: Bool = sodium_init() >= 0

    /// Throws unless libsodium could be initialised.
    static func ready() throws {
        guard initialised else {
            throw RoomCodeError(.libsodium, "libsodium could not be initialised (sodium_init failed): the system gave it no random source; check that /dev/urandom or getrandom(2) is available")
        }
    }

    /// SHA-512 of `message`: 64 bytes.
    static func sha512(_ message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha512_BYTES))
        _ = crypto_hash_sha512(&digest, message, UInt64(message.count))
        return digest
    }

    /// `crypto_core_ristretto255_from_hash`: the element derivation of RFC 9496 §4.3.4 on
    /// exactly 64 bytes, giving the element's 32-byte encoding; nil when `hash` is not 64 bytes.
    static func ristretto255FromHash(_ hash: [UInt8]) -> [UInt8]? {
        guard hash.count == Int(crypto_core_ristretto255_HASHBYTES) else { return nil }
        var element = [UInt8](repeating: 0, count: Int(crypto_core_ristretto255_BYTES))
        guard crypto_core_ristretto255_from_hash(&element, hash) == 0 else { return nil }
        return element
    }

    /// A uniformly random scalar in 1 ... L-1 (libsodium rejects zero), written into `scalar`.
    static func randomScalar(into scalar: SecretBuffer) {
        scalar.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress, bytes.count == Int(crypto_core_ristretto255_SCALARBYTES) else { return }
            crypto_core_ristretto255_scalar_random(base.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// `crypto_scalarmult_ristretto255`: the encoding of `scalar` times the element encoded by
    /// `element`; nil when `element` is not 32 bytes, is not a canonical ristretto255 encoding,
    /// or the product is the identity (libsodium returns -1 for all of these).
    static func ristretto255ScalarMult(_ scalar: SecretBuffer, _ element: [UInt8]) -> [UInt8]? {
        guard element.count == Int(crypto_core_ristretto255_BYTES),
              scalar.count == Int(crypto_scalarmult_ristretto255_SCALARBYTES) else { return nil }
        var product = [UInt8](repeating: 0, count: Int(crypto_scalarmult_ristretto255_BYTES))
        let result = scalar.withUnsafeBytes { scalarBytes -> Int32 in
            guard let base = scalarBytes.baseAddress else { return -1 }
            return crypto_scalarmult_ristretto255(&product, base.assumingMemoryBound(to: UInt8.self), element)
        }
        guard result == 0 else {
            wipe(&product)
            return nil
        }
        return product
    }

    /// HMAC-SHA-512 (RFC 2104) of `message` under `key` of any length: 64 bytes.
    static func hmacSHA512(key: SecretBuffer, _ message: [UInt8]) -> [UInt8] {
        var state = crypto_auth_hmacsha512_state()
        var tag = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha512_BYTES))
        key.withUnsafeBytes { keyBytes in
            guard let base = keyBytes.baseAddress else { return }
            _ = crypto_auth_hmacsha512_init(&state, base.assumingMemoryBound(to: UInt8.self), keyBytes.count)
        }
        _ = crypto_auth_hmacsha512_update(&state, message, UInt64(message.count))
        _ = crypto_auth_hmacsha512_final(&state, &tag)
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
        return tag
    }

    /// True when `a` and `b` have the same length and bytes; the bytes are compared in time
    /// that does not depend on where they differ (`sodium_memcmp`). Lengths are public.
    static func constantTimeEqual(_ a: SecretBuffer, _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !b.isEmpty else { return false }
        return a.withUnsafeBytes { aBytes in
            guard let base = aBytes.baseAddress else { return false }
            return sodium_memcmp(base, b, b.count) == 0
        }
    }

    /// Overwrites `bytes` with zeros in a way the compiler cannot drop (`sodium_memzero`).
    ///
    /// - Important: Swift may have copied an array before (a copy on write, a reallocation on
    ///   growth); only this storage is wiped. Secrets that live long are kept in `SecretBuffer`.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }
}
