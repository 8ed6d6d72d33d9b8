import CSSL
import TransportCore

/// Small helpers over libcrypto shared by the identity and the TLS stream.
enum OpenSSL {
    /// Sets libssl up once, before any other OpenSSL call of this program: with its error
    /// texts, but without the cleanup at exit (freeing every table as the process ends cost
    /// svc-connect about 0.7 ms on every run; the kernel frees it all anyway).
    static let started: Void = {
        _ = OPENSSL_init_ssl(UInt64(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS), nil)
    }()

    /// The error queue's last reason as OpenSSL words (e.g. "wrong version number"), then
    /// clears the queue; nil when it was empty.
    static func takeErrorText() -> String? {
        let error = ERR_peek_last_error()
        ERR_clear_error()
        guard error != 0, let text = ERR_reason_error_string(error) else { return nil }
        return String(cString: text)
    }

    /// The reason code of the error queue's last entry (0 when empty), without clearing it.
    static var lastReason: Int32 {
        cssl_err_get_reason(ERR_peek_last_error())
    }

    /// An error for an OpenSSL call that failed where it should not.
    static func failure(_ call: String) -> SecureTransportError {
        let detail = takeErrorText().map { " (\($0))" } ?? ""
        return SecureTransportError(.openSSL, "OpenSSL's \(call) failed\(detail); is libssl3 installed properly?")
    }

    /// The SHA-256 of a certificate's public key (DER SubjectPublicKeyInfo): the key's
    /// fingerprint.
    ///
    /// Encodes the key as the certificate holds it (`i2d_X509_PUBKEY`), not from the decoded
    /// key (`i2d_PUBKEY`, which in OpenSSL 3.0 builds an encoder each time: about 0.2 ms of
    /// every join on the publisher).
    /// - Parameter certificate: an `X509 *`.
    static func fingerprint(ofCertificate certificate: OpaquePointer) -> PublicKeyFingerprint? {
        guard let publicKey = X509_get_X509_PUBKEY(certificate) else { return nil }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_PUBKEY(publicKey, &der)
        guard length > 0, let der else { return nil }
        defer { CRYPTO_free(der, #fileID, #line) }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        guard EVP_Digest(der, Int(length), &digest, &digestLength, EVP_sha256(), nil) == 1 else { return nil }
        return PublicKeyFingerprint(bytes: Array(digest.prefix(Int(digestLength))))
    }

    /// Whether a key (`EVP_PKEY *`) is ECDSA on P-256, the only kind svc makes and loads.
    static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 32)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return false }
        // `length` is the name's length without its NUL; never trust it past the buffer.
        let bytes = name.prefix(max(0, min(length, name.count - 1))).map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self) == "prime256v1"
    }

    /// Whether a peer's key (`EVP_PKEY *`) is of a kind protocol version 2 uses: ECDSA on P-256
    /// or Ed25519.
    static func isAcceptedKind(_ key: OpaquePointer) -> Bool {
        EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 || isP256(key)
    }
}
