import CSSL
import Foundation
import Glibc
import MessagingTesting
@testable import SecureTransport
import XCTest

/// The certificate kept beside the key file: used at the next start only when it is this key's,
/// signed by it and valid now; anything else is replaced by a new one, and the key file's own
/// checks come first.
final class StoredCertificateTests: XCTestCase {
    /// The DER encoding of an `X509 *`.
    static func der(_ certificate: OpaquePointer) -> [UInt8] {
        var bytes: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &bytes)
        guard length > 0, let bytes else { return [] }
        defer { CRYPTO_free(bytes, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(length)))
    }

    /// A certificate carrying `subject`'s public key, signed by `signer`'s key, valid from
    /// `from` to `until` seconds from now.
    static func certificate(for subject: Identity, signedBy signer: Identity, from: Int = -86_400, until: Int = 86_400) -> [UInt8] {
        guard let certificate = X509_new() else { return [] }
        defer { X509_free(certificate) }
        guard X509_set_version(certificate, 2) == 1,
              ASN1_INTEGER_set(X509_get_serialNumber(certificate), 7) == 1,
              X509_gmtime_adj(X509_getm_notBefore(certificate), from) != nil,
              X509_gmtime_adj(X509_getm_notAfter(certificate), until) != nil,
              let name = X509_get_subject_name(certificate),
              X509_NAME_add_entry_by_txt(name, "CN", CSSL_MBSTRING_ASC, "svc", -1, -1, 0) == 1,
              X509_set_issuer_name(certificate, name) == 1,
              X509_set_pubkey(certificate, subject.key) == 1,
              X509_sign(certificate, signer.key, EVP_sha256()) > 0
        else { return [] }
        return der(certificate)
    }

    func testTheCertificateMadeOnFirstUseIsKeptBesideTheKeyAndPresentedAtTheNextStart() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let created = try Identity.loadOrCreate(at: path)
        XCTAssertFalse(created.certificateWasStored)
        let stored = try XCTUnwrap(TemporaryDirectory.read(path + ".crt"), "kept as identity.pem.crt")
        XCTAssertEqual(stored, Self.der(created.certificate))
        var status = stat()
        XCTAssertEqual(stat(path + ".crt", &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)

        let reloaded = try Identity.loadOrCreate(at: path)
        XCTAssertTrue(reloaded.certificateWasStored)
        XCTAssertEqual(Self.der(reloaded.certificate), stored)
        XCTAssertEqual(reloaded.fingerprint, created.fingerprint)
        XCTAssertNoThrow(try reloaded.prepareForConnecting())
        XCTAssertEqual(TemporaryDirectory.names(in: directory.path).sorted(), ["identity.pem", "identity.pem.crt"], "no temporary file is left")
    }

    func testAnIdentityLoadedWithItsStoredCertificateCompletesAHandshake() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let first = try Identity.loadOrCreate(at: path)
        let server = try Identity.loadOrCreate(at: path)
        XCTAssertTrue(server.certificateWasStored)
        let scheduler = ManualScheduler()
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let serverStream = try TLSStream(over: pair.1, scheduler: scheduler, identity: server, role: .server)
        let clientStream = try TLSStream(over: pair.0, scheduler: scheduler, identity: TLSStreamTests.clientIdentity,
                                         role: .client(acceptsServerKey: { $0 == first.fingerprint }))
        let ends = [Endpoint(serverStream), Endpoint(clientStream)]
        scheduler.run()
        XCTAssertEqual(clientStream.secureSession?.peerKey, first.fingerprint, "\(ends.map(\.closed))")
    }

    /// Whatever lies beside the key, the key's own certificate is presented, with the key's
    /// fingerprint, and a good one is stored in place of a bad one.
    func testACertificateThatIsNotThisKeysOwnIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let identity = try Identity.loadOrCreate(at: path)
        let other = try Identity.ephemeral()
        let good = Self.der(identity.certificate)
        var truncated = good
        truncated.removeLast(10)
        let cases: [(String, [UInt8])] = [
            ("another key's certificate (a stale one, after the key was replaced)", Self.der(other.certificate)),
            ("this key, signed by another key", Self.certificate(for: identity, signedBy: other)),
            ("another key, signed by this key", Self.certificate(for: other, signedBy: identity)),
            ("this key's, expired", Self.certificate(for: identity, signedBy: identity, from: -172_800, until: -86_400)),
            ("this key's, not valid yet", Self.certificate(for: identity, signedBy: identity, from: 86_400, until: 172_800)),
            ("truncated", truncated),
            ("followed by more bytes", good + [0]),
            ("empty", []),
            ("not a certificate", Array("-----BEGIN CERTIFICATE-----\n".utf8)),
            ("too large", good + [UInt8](repeating: 0, count: Identity.certificateFileLimit)),
        ]
        for (what, bytes) in cases {
            unlink(path + ".crt")
            _ = directory.write(bytes, to: "identity.pem.crt")
            let loaded = try Identity.loadOrCreate(at: path)
            XCTAssertFalse(loaded.certificateWasStored, what)
            XCTAssertEqual(loaded.fingerprint, identity.fingerprint, what)
            XCTAssertNoThrow(try loaded.prepareForConnecting(), what)
            let replaced = try Identity.loadOrCreate(at: path)
            XCTAssertTrue(replaced.certificateWasStored, "replaced by a good one: \(what)")
            XCTAssertEqual(replaced.fingerprint, identity.fingerprint, what)
        }
        // A certificate this key signed for itself, made by another program, is as good as ours.
        unlink(path + ".crt")
        _ = directory.write(Self.certificate(for: identity, signedBy: identity), to: "identity.pem.crt")
        XCTAssertTrue(try Identity.loadOrCreate(at: path).certificateWasStored)
    }

    func testSomethingElseAtTheCertificatesPathNeitherBlocksNorStopsAStart() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let identity = try Identity.loadOrCreate(at: path)
        unlink(path + ".crt")
        XCTAssertEqual(mkfifo(path + ".crt", 0o600), 0)
        let fromFIFO = try Identity.loadOrCreate(at: path)
        XCTAssertFalse(fromFIFO.certificateWasStored, "a FIFO is not read (nor waited on)")
        XCTAssertEqual(fromFIFO.fingerprint, identity.fingerprint)
        XCTAssertTrue(try Identity.loadOrCreate(at: path).certificateWasStored, "and was replaced by the certificate")

        unlink(path + ".crt")
        XCTAssertEqual(mkdir(path + ".crt", 0o700), 0)
        for _ in 0..<2 {
            let loaded = try Identity.loadOrCreate(at: path)
            XCTAssertFalse(loaded.certificateWasStored, "a directory cannot be replaced: a certificate is made at every start")
            XCTAssertEqual(loaded.fingerprint, identity.fingerprint)
        }
        XCTAssertEqual(TemporaryDirectory.names(in: directory.path).sorted(), ["identity.pem", "identity.pem.crt"], "no temporary file is left")
    }

    func testTheKeyFilesChecksComeFirst() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        _ = try Identity.loadOrCreate(at: path)
        XCTAssertNotNil(TemporaryDirectory.read(path + ".crt"))
        XCTAssertEqual(chmod(path, 0o644), 0)
        XCTAssertThrowsError(try Identity.loadOrCreate(at: path), "a good certificate does not excuse a key file others can read") { error in
            XCTAssertEqual((error as? SecureTransportError)?.code, .keyFileTooOpen)
        }
        XCTAssertEqual(chmod(path, 0o600), 0)
        _ = directory.write(Array("not a key\n".utf8), to: "identity.pem")
        XCTAssertEqual(chmod(path, 0o600), 0)
        XCTAssertThrowsError(try Identity.loadOrCreate(at: path)) { error in
            XCTAssertEqual((error as? SecureTransportError)?.code, .notAKey)
        }
    }

    /// A key whose file asks for compressed points (svc never writes one) gets a new certificate
    /// at every start, with the fingerprint OpenSSL's encoding of that file gives, and ignores
    /// a certificate of the same key with the other encoding.
    func testAKeyWithCompressedPointsKeepsItsFingerprintAndNoCertificate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let uncompressed = try Identity.loadOrCreate(at: path)
        let compressed = directory.path + "/compressed.pem"
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        tool.arguments = ["pkey", "-in", path, "-ec_conv_form", "compressed", "-out", compressed]
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        tool.waitUntilExit()
        XCTAssertEqual(tool.terminationStatus, 0)
        XCTAssertEqual(chmod(compressed, 0o600), 0)
        let made = try Identity.loadOrCreate(at: compressed)
        XCTAssertNil(TemporaryDirectory.read(compressed + ".crt"), "not kept")
        XCTAssertNotEqual(made.fingerprint, uncompressed.fingerprint, "two encodings of one key, two fingerprints, as before")
        XCTAssertEqual(link(path + ".crt", compressed + ".crt"), 0)
        let again = try Identity.loadOrCreate(at: compressed)
        XCTAssertFalse(again.certificateWasStored, "the uncompressed certificate of the same key is not taken")
        XCTAssertEqual(again.fingerprint, made.fingerprint)
    }
}
