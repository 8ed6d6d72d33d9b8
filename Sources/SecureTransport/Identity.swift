import CSSL
import Synchronization
import TransportCore

/// Who this program is on a secure link: an ECDSA P-256 private key, and the self-signed
/// certificate built from it at load (only its public key matters; peers know us by
/// `fingerprint`).
///
/// Load it once at start and share it: it also holds the TLS settings (one for each role, made
/// when first needed: a client never pays for the server's) that every `TLSStream` of this
/// program uses.
///
/// - Important: immutable once made but for the contexts, which are made under a lock; it may
///   be shared between threads.
public final class Identity: @unchecked Sendable {
    /// The SHA-256 of the public key (DER SubjectPublicKeyInfo): what peers see and pin.
    public let fingerprint: PublicKeyFingerprint
    /// The key file, or nil for an ephemeral identity.
    public let path: String?
    /// Whether `loadOrCreate(at:)` made a new key (the tool may say so, with the fingerprint).
    public let wasCreated: Bool

    // OpenSSL objects, owned here and freed in deinit; none is changed after init.
    /// `EVP_PKEY *`
    let key: OpaquePointer
    /// `X509 *`: self-signed, from `key`.
    let certificate: OpaquePointer
    /// `SSL_CTX *` for each role, built from the key and certificate when first asked for (see
    /// TLSContext.swift).
    private let contexts = Mutex(Contexts())

    /// The two contexts; OpenSSL's `SSL_CTX` is safe to share once set up.
    private struct Contexts: @unchecked Sendable {
        var server: OpaquePointer?
        var client: OpaquePointer?
    }

    /// A context handed out of the lock.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Takes ownership of `key` (an `EVP_PKEY *`), also when it throws.
    init(key: OpaquePointer, path: String?, wasCreated: Bool) throws(SecureTransportError) {
        let certificate: OpaquePointer
        do {
            certificate = try Identity.selfSignedCertificate(for: key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        guard let fingerprint = OpenSSL.fingerprint(ofCertificate: certificate) else {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw OpenSSL.failure("i2d_X509_PUBKEY")
        }
        self.fingerprint = fingerprint
        self.path = path
        self.wasCreated = wasCreated
        self.key = key
        self.certificate = certificate
    }

    deinit {
        contexts.withLock { contexts in
            if let server = contexts.server { SSL_CTX_free(server) }
            if let client = contexts.client { SSL_CTX_free(client) }
        }
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The `SSL_CTX *` for `role`, made on first use.
    /// - Throws: `SecureTransportError` (`.openSSL`) when OpenSSL cannot make it.
    func context(for role: TLSContext.Role) throws(SecureTransportError) -> OpaquePointer {
        try contexts.withLock { (contexts) throws(SecureTransportError) -> Context in
            if let made = role == .server ? contexts.server : contexts.client { return Context(pointer: made) }
            let made = try TLSContext.make(role: role, key: key, certificate: certificate)
            if role == .server { contexts.server = made } else { contexts.client = made }
            return Context(pointer: made)
        }.pointer
    }

    /// Makes the client's TLS context now and pays the costs OpenSSL otherwise puts on the first
    /// handshake (fetching the key-exchange, signature and certificate-decoding algorithms):
    /// about 1.5 ms that svc-connect spends while the service is being looked up instead.
    /// - Throws: `SecureTransportError` (`.openSSL`) when OpenSSL cannot make the context.
    public func prepareForConnecting() throws(SecureTransportError) {
        _ = try context(for: .client)
        // Checking a certificate's signature, as the server's will be (our certificate was
        // already decoded, as the server's will be: see `selfSignedCertificate`).
        guard let publicKey = X509_get0_pubkey(certificate), X509_verify(certificate, publicKey) == 1 else { throw OpenSSL.failure("X509_verify") }
        // An X25519 key, as the key share of the ClientHello.
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "X25519", nil) else { throw OpenSSL.failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var share: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &share) == 1 else { throw OpenSSL.failure("EVP_PKEY_generate") }
        EVP_PKEY_free(share)
        ERR_clear_error()
    }

    /// A new key held only in memory: for probes and benchmarks, which need no lasting name.
    /// - Throws: `SecureTransportError` (`.openSSL`) when OpenSSL cannot make a key.
    public static func ephemeral() throws(SecureTransportError) -> Identity {
        try Identity(key: generateKey(), path: nil, wasCreated: true)
    }

    /// A new ECDSA P-256 key (`EVP_PKEY *`, owned by the caller).
    static func generateKey() throws(SecureTransportError) -> OpaquePointer {
        OpenSSL.started
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSL.failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSL.failure("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { throw OpenSSL.failure("EVP_PKEY_CTX_set_group_name") }
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSL.failure("EVP_PKEY_generate") }
        return key
    }

    /// A self-signed X.509 v3 certificate for `key` (P-256, as every svc key): subject and
    /// issuer CN=svc, a random serial, valid from a day ago for 100 years, signed with ECDSA and
    /// SHA-256. Nothing in it but the public key matters, so it is made anew at every start.
    ///
    /// The public key goes in as its encoded point with the P-256 algorithm identifier, not
    /// through `X509_set_pubkey`, which in OpenSSL 3.0 sets up an encoder first (0.9 ms of every
    /// start, measured for row 2 of Scripts/bench); the signed certificate is then encoded and
    /// decoded once, so that OpenSSL holds its key as it does for a peer's certificate.
    private static func selfSignedCertificate(for key: OpaquePointer) throws(SecureTransportError) -> OpaquePointer {
        guard let certificate = X509_new() else { throw OpenSSL.failure("X509_new") }
        defer { X509_free(certificate) }
        var serial = [UInt8](repeating: 0, count: 8)
        guard X509_set_version(certificate, 2) == 1,
              RAND_bytes(&serial, Int32(serial.count)) == 1,
              ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serial.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) == 1,
              X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400) != nil,
              X509_time_adj_ex(X509_getm_notAfter(certificate), 36_525, 0, nil) != nil,
              let name = X509_get_subject_name(certificate),
              X509_NAME_add_entry_by_txt(name, "CN", CSSL_MBSTRING_ASC, "svc", -1, -1, 0) == 1,
              X509_set_issuer_name(certificate, name) == 1,
              setPublicKey(of: certificate, to: key),
              X509_sign(certificate, key, EVP_sha256()) > 0
        else {
            throw OpenSSL.failure("building the self-signed certificate")
        }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &der)
        guard length > 0, let der else { throw OpenSSL.failure("i2d_X509") }
        defer { CRYPTO_free(der, #fileID, #line) }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(der)
        guard let decoded = d2i_X509(nil, &cursor, Int(length)) else { throw OpenSSL.failure("d2i_X509") }
        return decoded
    }

    /// Puts a P-256 key's public point into `certificate`'s SubjectPublicKeyInfo
    /// (id-ecPublicKey, prime256v1). Returns false when OpenSSL cannot.
    ///
    /// A key whose file asks for another point form than uncompressed (svc's) goes through
    /// `X509_set_pubkey`, which writes the point in that form: the fingerprint stays what it was.
    private static func setPublicKey(of certificate: OpaquePointer, to key: OpaquePointer) -> Bool {
        var form = [CChar](repeating: 0, count: 16)
        var formLength = 0
        guard EVP_PKEY_get_utf8_string_param(key, "point-format", &form, form.count, &formLength) == 1,
              String(decoding: form.prefix(min(formLength, form.count - 1)).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "uncompressed"
        else { return X509_set_pubkey(certificate, key) == 1 }
        // An uncompressed P-256 point is 65 bytes.
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &point, point.count, &length) == 1,
              length == point.count,
              let publicKey = X509_get_X509_PUBKEY(certificate),
              let bytes = CRYPTO_malloc(Int(length), #fileID, #line)?.assumingMemoryBound(to: UInt8.self)
        else { return false }
        bytes.initialize(from: point, count: length)
        // On success the SubjectPublicKeyInfo owns `bytes`; the object identifiers are static.
        guard X509_PUBKEY_set0_param(publicKey, OBJ_nid2obj(NID_X9_62_id_ecPublicKey), V_ASN1_OBJECT,
                                     UnsafeMutableRawPointer(OBJ_nid2obj(NID_X9_62_prime256v1)), bytes, Int32(length)) == 1
        else {
            CRYPTO_free(bytes, #fileID, #line)
            return false
        }
        return true
    }
}
