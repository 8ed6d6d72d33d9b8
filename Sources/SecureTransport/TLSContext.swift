import CSSL
import TransportCore

/// The TLS settings of protocol version 2, one `SSL_CTX` per role, and the C callbacks that
/// hand OpenSSL's questions to the `TLSStream` the connection belongs to.
///
/// TLS 1.3 only, OpenSSL's default suites and groups, ALPN exactly `p2pm/2`, no session
/// tickets or cache (no resumption, no early data), a certificate on both sides. Chain checks
/// are replaced: the server accepts any client key (the room layer decides what a key may do),
/// the client asks its policy about the server's key.
enum TLSContext {
    enum Role { case server, client }

    /// The most bytes of a peer's certificate message. Ours are one self-signed certificate of
    /// about 400 bytes; OpenSSL's default (100 KiB) is memory a hostile peer need not get.
    static let maximumCertificateList = 16_384

    /// The signatures a handshake may carry, both ways: ECDSA P-256 with SHA-256 (our keys) and
    /// Ed25519. Keys of other kinds (RSA with a huge exponent costs a server many times an
    /// ECDSA check) are refused before any signature is checked.
    static let signatureAlgorithms = "ECDSA+SHA256:ed25519"

    /// The one application protocol, as ALPN names it.
    static let applicationProtocol = Array(TLSStream.applicationProtocol.utf8)

    /// Builds the context for `role` from a key (`EVP_PKEY *`) and its certificate (`X509 *`);
    /// the caller owns the result.
    static func make(role: Role, key: OpaquePointer, certificate: OpaquePointer) throws(SecureTransportError) -> OpaquePointer {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_method()) else { throw OpenSSL.failure("SSL_CTX_new") }
        func check(_ ok: Bool, _ call: String) throws(SecureTransportError) {
            guard ok else {
                SSL_CTX_free(context)
                throw OpenSSL.failure(call)
            }
        }
        try check(cssl_ctx_set_min_proto_version(context, TLS1_3_VERSION) == 1, "SSL_CTX_set_min_proto_version")
        try check(cssl_ctx_set_max_proto_version(context, TLS1_3_VERSION) == 1, "SSL_CTX_set_max_proto_version")
        try check(SSL_CTX_set_num_tickets(context, 0) == 1, "SSL_CTX_set_num_tickets")
        SSL_CTX_set_options(context, CSSL_OP_NO_TICKET | CSSL_OP_NO_RENEGOTIATION)
        _ = cssl_ctx_set_mode(context, CSSL_MODE_RELEASE_BUFFERS)
        cssl_ctx_disable_session_cache(context)
        _ = cssl_ctx_set_max_cert_list(context, maximumCertificateList)
        try check(SSL_CTX_use_certificate(context, certificate) == 1, "SSL_CTX_use_certificate")
        try check(SSL_CTX_use_PrivateKey(context, key) == 1, "SSL_CTX_use_PrivateKey")
        try check(SSL_CTX_check_private_key(context) == 1, "SSL_CTX_check_private_key")
        try check(cssl_ctx_set1_sigalgs_list(context, signatureAlgorithms) == 1, "SSL_CTX_set1_sigalgs_list")
        SSL_CTX_set_cert_verify_callback(context, verifyPeerCertificate, nil)
        SSL_CTX_set_msg_callback(context, noteHandshakeMessage)
        switch role {
        case .server:
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
            SSL_CTX_set_client_hello_cb(context, requireALPN, nil)
            SSL_CTX_set_alpn_select_cb(context, selectApplicationProtocol, nil)
        case .client:
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            let list = [UInt8(applicationProtocol.count)] + applicationProtocol
            // Returns 0 on success (unlike the rest of libssl).
            try check(SSL_CTX_set_alpn_protos(context, list, UInt32(list.count)) == 0, "SSL_CTX_set_alpn_protos")
        }
        ERR_clear_error()
        return context
    }

    /// The stream an `SSL *` belongs to (set as its app data by `TLSStream.init`).
    ///
    /// - Important: unretained, and safe so: the stream owns the `SSL`, frees it in its deinit,
    ///   and the callbacks run only inside the stream's own calls into libssl.
    static func stream(of ssl: OpaquePointer?) -> TLSStream? {
        guard let ssl, let data = cssl_get_app_data(ssl) else { return nil }
        return Unmanaged<TLSStream>.fromOpaque(data).takeUnretainedValue()
    }
}

/// Sees every protocol message; counts the key updates and session tickets a peer sends after
/// the handshake (each costs a key derivation; OpenSSL limits only 32 key updates in a row).
private func noteHandshakeMessage(_ isWrite: Int32, _: Int32, _ contentType: Int32, _ bytes: UnsafeRawPointer?, _ length: Int,
                                  _ ssl: OpaquePointer?, _: UnsafeMutableRawPointer?) {
    guard isWrite == 0, contentType == SSL3_RT_HANDSHAKE, length >= 1, let bytes,
          [SSL3_MT_KEY_UPDATE, SSL3_MT_NEWSESSION_TICKET].contains(Int32(bytes.load(as: UInt8.self))),
          let stream = TLSContext.stream(of: ssl)
    else { return }
    stream.noteKeyUpdate()
}

/// Replaces the chain check: the stream judges the peer's public key alone.
private func verifyPeerCertificate(_ store: OpaquePointer?, _: UnsafeMutableRawPointer?) -> Int32 {
    guard let store,
          let data = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
          let stream = TLSContext.stream(of: OpaquePointer(data)),
          let certificate = X509_STORE_CTX_get0_cert(store)
    else { return 0 }
    if stream.acceptsPeerCertificate(certificate) { return 1 }
    // "Rejected" becomes a bad_certificate alert, which the server reports as such.
    X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
    return 0
}

/// Server: a ClientHello without ALPN is refused at once (no_application_protocol alert); the
/// ALPN callback alone would let it through, as OpenSSL calls it only when the extension is there.
private func requireALPN(_ ssl: OpaquePointer?, _ alert: UnsafeMutablePointer<Int32>?, _: UnsafeMutableRawPointer?) -> Int32 {
    var extensionData: UnsafePointer<UInt8>?
    var length = 0
    if let ssl, SSL_client_hello_get0_ext(ssl, UInt32(TLSEXT_TYPE_application_layer_protocol_negotiation), &extensionData, &length) == 1 {
        return SSL_CLIENT_HELLO_SUCCESS
    }
    TLSContext.stream(of: ssl)?.noteClientOfferedNoProtocol()
    alert?.pointee = SSL_AD_NO_APPLICATION_PROTOCOL
    return SSL_CLIENT_HELLO_ERROR
}

/// Server: picks `p2pm/2` from the client's list, or refuses the handshake.
private func selectApplicationProtocol(_ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                       _ outLength: UnsafeMutablePointer<UInt8>?, _ list: UnsafePointer<UInt8>?,
                                       _ listLength: UInt32, _: UnsafeMutableRawPointer?) -> Int32 {
    guard let list, let out, let outLength else { return SSL_TLSEXT_ERR_ALERT_FATAL }
    let wanted = TLSContext.applicationProtocol
    var index = 0
    let end = Int(listLength)
    while index < end {
        let length = Int(list[index])
        let start = index + 1
        guard length > 0, start + length <= end else { break }
        if length == wanted.count, (0..<length).allSatisfy({ list[start + $0] == wanted[$0] }) {
            out.pointee = list + start
            outLength.pointee = UInt8(length)
            return SSL_TLSEXT_ERR_OK
        }
        index = start + length
    }
    TLSContext.stream(of: ssl)?.noteClientOfferedNoProtocol()
    return SSL_TLSEXT_ERR_ALERT_FATAL
}
