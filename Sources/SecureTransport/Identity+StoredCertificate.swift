import CSSL
import Glibc

/// The self-signed certificate kept beside the key file (`<key file>.crt`, DER), so that a
/// start reads about 400 bytes instead of making and signing a certificate: about 0.7 ms of
/// CPU on every svc-connect start (docs/BENCHMARKS.md, row 2).
///
/// Nothing in the file is trusted: a certificate is used only when it carries exactly the
/// public key of the key file, as the uncompressed point a new certificate would hold (so the
/// fingerprint is the same either way), its signature checks with that key (only the key's
/// holder made it), and it is valid now. (A key file that asks for another point form, which
/// svc never writes, gets a new certificate at every start, as before: its fingerprint follows
/// that form.) Any other file (missing, unreadable, not a regular
/// file, too large, not one DER certificate, stale after the key was replaced, for another
/// key, signed by another key, expired) is ignored, and a new certificate is made and stored
/// in its place. The key file's own checks come first and are unchanged.
extension Identity {
    /// Where the certificate of the key at `keyPath` is kept.
    static func certificatePath(forKey keyPath: String) -> String { keyPath + ".crt" }

    /// The most bytes read from a certificate file (svc's certificates are about 400 bytes).
    static let certificateFileLimit = 16_384

    /// Whether the certificate of `key` (`EVP_PKEY *`) is kept beside its file: for keys in
    /// the form svc writes (uncompressed points).
    static func keepsCertificate(of key: OpaquePointer) -> Bool { hasUncompressedPoints(key) }

    /// The stored certificate (`X509 *`, owned by the caller) when it may be presented for
    /// `key` (`EVP_PKEY *`, whose key file is `keyPath`); nil when there is none such.
    static func storedCertificate(for key: OpaquePointer, keyPath: String) -> OpaquePointer? {
        guard keepsCertificate(of: key), let bytes = readCertificateFile(certificatePath(forKey: keyPath)) else { return nil }
        ERR_clear_error()
        defer { ERR_clear_error() }
        let decoded: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            // One certificate and nothing after it.
            guard cursor == base + buffer.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let certificate = decoded else { return nil }
        guard carriesPublicKey(of: key, certificate), isValidNow(certificate), X509_verify(certificate, key) == 1 else {
            X509_free(certificate)
            return nil
        }
        return certificate
    }

    /// Keeps `certificate` beside the key file: written whole to a file of its own (mode 0600),
    /// then renamed over the old one, so a reader sees the old file or the new, never half.
    /// Best effort: a certificate that cannot be stored (a read-only directory) is made again
    /// at the next start, which only costs that time.
    static func storeCertificate(_ certificate: OpaquePointer, keyPath: String) {
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &der)
        guard length > 0, let der else { return }
        defer { CRYPTO_free(der, #fileID, #line) }
        let path = certificatePath(forKey: keyPath)
        var suffix = [UInt8](repeating: 0, count: 6)
        guard RAND_bytes(&suffix, Int32(suffix.count)) == 1 else { return }
        let temporary = path + ".new-" + suffix.map { String($0, radix: 16) }.joined()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var written = 0
        while written < Int(length) {
            let result = Glibc.write(fd, der + written, Int(length) - written)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { break }
            written += result
        }
        Glibc.close(fd)
        if written != Int(length) || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// The file's bytes, or nil when it is missing, not a regular file, unreadable or larger
    /// than `certificateFileLimit`. Opened without blocking: a FIFO put there cannot hold a start.
    private static func readCertificateFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= certificateFileLimit else { return nil }
        var bytes = [UInt8](repeating: 0, count: certificateFileLimit + 1)
        var count = 0
        while count < bytes.count {
            let result = bytes[count...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { return nil }
            if result == 0 { break }
            count += result
        }
        guard count > 0, count <= certificateFileLimit else { return nil }
        return Array(bytes.prefix(count))
    }

    /// Whether the certificate's SubjectPublicKeyInfo is `key`'s P-256 public point,
    /// uncompressed, with the named-curve identifier: what `selfSignedCertificate` puts there,
    /// so the fingerprint is the same.
    private static func carriesPublicKey(of key: OpaquePointer, _ certificate: OpaquePointer) -> Bool {
        // An uncompressed P-256 point is 65 bytes.
        var point = [UInt8](repeating: 0, count: 65)
        var pointLength = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &point, point.count, &pointLength) == 1,
              pointLength == point.count,
              let publicKey = X509_get_X509_PUBKEY(certificate)
        else { return false }
        var algorithm: OpaquePointer?
        var bytes: UnsafePointer<UInt8>?
        var length: Int32 = 0
        var parameters: UnsafeMutablePointer<X509_ALGOR>?
        guard X509_PUBKEY_get0_param(&algorithm, &bytes, &length, &parameters, publicKey) == 1,
              let algorithm, OBJ_obj2nid(algorithm) == NID_X9_62_id_ecPublicKey,
              let parameters, curveName(of: parameters) == NID_X9_62_prime256v1,
              let bytes, Int(length) == pointLength
        else { return false }
        return memcmp(bytes, point, pointLength) == 0
    }

    /// The curve an EC algorithm identifier names, or `NID_undef`.
    private static func curveName(of algorithm: UnsafeMutablePointer<X509_ALGOR>) -> Int32 {
        var type: Int32 = 0
        var value: UnsafeRawPointer?
        X509_ALGOR_get0(nil, &type, &value, algorithm)
        guard type == V_ASN1_OBJECT, let value else { return NID_undef }
        return OBJ_obj2nid(OpaquePointer(value))
    }

    /// Whether the current time lies within the certificate's validity.
    private static func isValidNow(_ certificate: OpaquePointer) -> Bool {
        guard let notBefore = X509_get0_notBefore(certificate), let notAfter = X509_get0_notAfter(certificate) else { return false }
        return X509_cmp_current_time(notBefore) < 0 && X509_cmp_current_time(notAfter) > 0
    }
}
