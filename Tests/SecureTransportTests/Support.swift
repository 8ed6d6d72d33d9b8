import CSSL
import MessagingTesting
@testable import SecureTransport
import TransportCore
import TransportPOSIX
import XCTest

/// The upper layer of one end: starts a stream and records what it gets.
final class Endpoint {
    let stream: any ByteStream
    var received: [UInt8] = []
    var closed: [Connection.CloseReason] = []
    /// Called with each chunk after it is recorded.
    var onChunk: (([UInt8]) -> Void)?

    init(_ stream: any ByteStream) {
        self.stream = stream
        stream.start(onBytes: { [unowned self] in received += $0; onChunk?($0) },
                     onClose: { [unowned self] in closed.append($0) })
    }

    /// The text of a `.failed` close, or nil.
    var failureText: String? {
        guard case .failed(let error) = closed.first else { return nil }
        return error.description
    }
}

extension XCTestCase {
    /// Fails unless `endpoint` closed once with `.failed` and a text containing `words`.
    func assertFailed(_ endpoint: Endpoint, saying words: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(endpoint.closed.count, 1, "closes: \(endpoint.closed)", file: file, line: line)
        guard let text = endpoint.failureText else { return XCTFail("closed with \(endpoint.closed)", file: file, line: line) }
        XCTAssertTrue(text.contains(words), "'\(text)' does not say '\(words)'", file: file, line: line)
    }
}

/// A TLS client svc would never be, driven by hand over an in-memory stream: for staging
/// older versions, a missing ALPN or a missing certificate against the server.
final class RawTLSClient {
    struct Options {
        var maximumVersion = TLS1_3_VERSION
        var offersALPN = true
        /// Presents this identity's certificate; none when nil.
        var identity: Identity?
        /// Presents a self-signed certificate of a fresh 2048-bit RSA key instead.
        var presentsRSAKey = false
    }

    let stream: InMemoryStream
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let networkIn: OpaquePointer
    private let networkOut: OpaquePointer
    /// Set once the client's handshake completed.
    var isHandshakeComplete = false
    /// The OpenSSL reason of the failure, once there is one.
    var failure: String?
    var closed: [Connection.CloseReason] = []

    init(over stream: InMemoryStream, options: Options) {
        self.stream = stream
        context = SSL_CTX_new(TLS_client_method())!
        _ = cssl_ctx_set_min_proto_version(context, TLS1_2_VERSION)
        _ = cssl_ctx_set_max_proto_version(context, options.maximumVersion)
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        if options.offersALPN {
            let list: [UInt8] = [6] + Array("p2pm/2".utf8)
            _ = SSL_CTX_set_alpn_protos(context, list, UInt32(list.count))
        }
        if let identity = options.identity {
            SSL_CTX_use_certificate(context, identity.certificate)
            SSL_CTX_use_PrivateKey(context, identity.key)
        }
        if options.presentsRSAKey {
            let keyContext = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil)!
            var key: OpaquePointer?
            _ = EVP_PKEY_keygen_init(keyContext)
            _ = EVP_PKEY_generate(keyContext, &key)
            EVP_PKEY_CTX_free(keyContext)
            let certificate = X509_new()!
            _ = X509_set_version(certificate, 2)
            _ = ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1)
            _ = X509_gmtime_adj(X509_getm_notBefore(certificate), 0)
            _ = X509_gmtime_adj(X509_getm_notAfter(certificate), 86400)
            _ = X509_set_pubkey(certificate, key)
            _ = X509_sign(certificate, key, EVP_sha256())
            SSL_CTX_use_certificate(context, certificate)
            SSL_CTX_use_PrivateKey(context, key)
            X509_free(certificate)
            EVP_PKEY_free(key)
        }
        ssl = SSL_new(context)!
        networkIn = BIO_new(BIO_s_mem())!
        networkOut = BIO_new(BIO_s_mem())!
        SSL_set_bio(ssl, networkIn, networkOut)
        SSL_set_connect_state(ssl)
        stream.start(onBytes: { [unowned self] bytes in
            _ = BIO_write(networkIn, bytes, Int32(bytes.count))
            advance()
        }, onClose: { [unowned self] in closed.append($0) })
        advance()
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Sends `count` TLS 1.3 key updates (after the handshake); `requested`: each asks the
    /// other end for one back.
    func sendKeyUpdates(_ count: Int, requested: Bool = false) {
        for _ in 0..<count {
            _ = SSL_key_update(ssl, requested ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED)
            _ = SSL_do_handshake(ssl)
        }
        ERR_clear_error()
        flush()
    }

    private func advance() {
        guard failure == nil else { return }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        let error = SSL_get_error(ssl, result)
        if result == 1 {
            isHandshakeComplete = true
            // Reads whatever follows (the server's verdict on our certificate, in TLS 1.3).
            var buffer = [UInt8](repeating: 0, count: 4096)
            ERR_clear_error()
            let read = SSL_read(ssl, &buffer, Int32(buffer.count))
            if read <= 0, SSL_get_error(ssl, read) == SSL_ERROR_SSL {
                failure = String(cString: ERR_reason_error_string(ERR_peek_last_error()))
            }
        } else if error != SSL_ERROR_WANT_READ {
            failure = ERR_reason_error_string(ERR_peek_last_error()).map { String(cString: $0) } ?? "error \(error)"
        }
        ERR_clear_error()
        flush()
    }

    private func flush() {
        let pending = Int(cssl_bio_pending(networkOut))
        if pending > 0 {
            var bytes = [UInt8](repeating: 0, count: pending)
            _ = BIO_read(networkOut, &bytes, Int32(pending))
            stream.send(bytes)
        }
    }
}

/// Deterministic bytes that do not repeat with a short period.
func patternBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}
