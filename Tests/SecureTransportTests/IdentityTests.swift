import CSSL
import Glibc
import MessagingTesting
@testable import SecureTransport
import Foundation
import Synchronization
import TransportCore
import XCTest

/// Identity key files: created 0600 without a race, reloaded to the same key, refused like ssh
/// when others could read them, refused with advice when they hold no key.
final class IdentityTests: XCTestCase {
    func mode(of path: String) -> mode_t {
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0, path)
        return status.st_mode & 0o777
    }

    func testAMissingKeyIsCreatedReadableOnlyByUsAndReloadsToTheSameKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let created = try Identity.loadOrCreate(at: path)
        XCTAssertTrue(created.wasCreated)
        XCTAssertEqual(created.path, path)
        XCTAssertEqual(mode(of: path), 0o600)
        let text = String(decoding: TemporaryDirectory.read(path) ?? [], as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), text)
        let loaded = try Identity.loadOrCreate(at: path)
        XCTAssertFalse(loaded.wasCreated)
        XCTAssertEqual(loaded.fingerprint, created.fingerprint)
        XCTAssertNotEqual(try Identity.ephemeral().fingerprint, created.fingerprint)
    }

    func testToolsStartingAtOnceOnFirstUseEndWithOneKey() throws {
        let directory = try TemporaryDirectory()
        for round in 0..<20 {
            let path = directory.path + "/identity-\(round).pem"
            let results = Mutex<[Result<PublicKeyFingerprint, SecureTransportError>]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let result = Result { () throws(SecureTransportError) in try Identity.loadOrCreate(at: path).fingerprint }
                results.withLock { $0.append(result) }
            }
            let keys = try results.withLock { try $0.map { try $0.get() } }
            XCTAssertEqual(Set(keys).count, 1, "every tool reads the one key that was made (round \(round))")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".new-") }
        XCTAssertEqual(leftovers, [], "no temporary file is left behind")
    }

    func testTheFingerprintIsTheSHA256OfThePublicKeyAsTheOpenSSLToolWritesIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let identity = try Identity.loadOrCreate(at: path)
        try identity.prepareForConnecting()
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        tool.arguments = ["pkey", "-in", path, "-pubout", "-outform", "DER"]
        let output = Pipe()
        tool.standardOutput = output
        try tool.run()
        let spki = output.fileHandleForReading.readDataToEndOfFile()
        tool.waitUntilExit()
        XCTAssertEqual(tool.terminationStatus, 0)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        XCTAssertEqual(Array(spki).withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }, 1)
        XCTAssertEqual(identity.fingerprint, PublicKeyFingerprint(bytes: digest))
    }

    /// svc writes PKCS#8 ("BEGIN PRIVATE KEY") and reads it with a decoder made for that form;
    /// a P-256 key in another form OpenSSL reads ("BEGIN EC PRIVATE KEY", as `openssl ec`
    /// writes it) still loads, through OpenSSL's general reader.
    func testAP256KeyWrittenByTheOpenSSLToolInItsOwnFormLoadsToTheSameKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let original = try Identity.loadOrCreate(at: path)
        let traditional = directory.path + "/traditional.pem"
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        tool.arguments = ["ec", "-in", path, "-out", traditional]
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        tool.waitUntilExit()
        XCTAssertEqual(tool.terminationStatus, 0)
        XCTAssertEqual(chmod(traditional, 0o600), 0)
        let text = try String(contentsOfFile: traditional, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("-----BEGIN EC PRIVATE KEY-----"), text)
        let reloaded = try Identity.loadOrCreate(at: traditional)
        XCTAssertFalse(reloaded.wasCreated)
        XCTAssertEqual(reloaded.fingerprint, original.fingerprint)
    }

    /// A P-256 key whose file asks for compressed points still makes a certificate whose
    /// public key is the one OpenSSL itself writes for that file.
    func testAKeyWithCompressedPointsGetsTheSubjectPublicKeyInfoOpenSSLWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        _ = try Identity.loadOrCreate(at: path)
        let compressed = directory.path + "/compressed.pem"
        func openssl(_ arguments: [String]) throws -> [UInt8] {
            let tool = Process()
            tool.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            tool.arguments = arguments
            let output = Pipe()
            tool.standardOutput = output
            tool.standardError = FileHandle.nullDevice
            try tool.run()
            let bytes = output.fileHandleForReading.readDataToEndOfFile()
            tool.waitUntilExit()
            XCTAssertEqual(tool.terminationStatus, 0, "\(arguments)")
            return Array(bytes)
        }
        _ = try openssl(["pkey", "-in", path, "-ec_conv_form", "compressed", "-out", compressed])
        XCTAssertEqual(chmod(compressed, 0o600), 0)
        let spki = try openssl(["pkey", "-in", compressed, "-pubout", "-outform", "DER"])
        XCTAssertEqual(spki.count, 59, "a compressed P-256 SubjectPublicKeyInfo")
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        XCTAssertEqual(spki.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }, 1)
        let identity = try Identity.loadOrCreate(at: compressed)
        try identity.prepareForConnecting()
        XCTAssertEqual(identity.fingerprint, PublicKeyFingerprint(bytes: digest))
    }

    func testIdentitiesLoadedFromOneFileRecogniseEachOther() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        let first = try Identity.loadOrCreate(at: path)
        let scheduler = ManualScheduler()
        let pair = InMemoryStream.pair(scheduler: scheduler)
        let server = try TLSStream(over: pair.1, scheduler: scheduler, identity: try Identity.loadOrCreate(at: path), role: .server)
        let client = try TLSStream(over: pair.0, scheduler: scheduler, identity: TLSStreamTests.clientIdentity,
                                   role: .client(acceptsServerKey: { $0 == first.fingerprint }))
        let ends = [Endpoint(server), Endpoint(client)]
        scheduler.run()
        XCTAssertEqual(client.secureSession?.peerKey, first.fingerprint, "the key survives a restart: \(ends.map(\.closed))")
    }

    func testAKeyFileOthersCanReadIsRefusedLikeSsh() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/identity.pem"
        _ = try Identity.loadOrCreate(at: path)
        for loose: mode_t in [0o644, 0o640, 0o604, 0o620] {
            XCTAssertEqual(chmod(path, loose), 0)
            XCTAssertThrowsError(try Identity.loadOrCreate(at: path)) { error in
                let error = error as? SecureTransportError
                XCTAssertEqual(error?.code, .keyFileTooOpen)
                let octal = "0" + String(loose, radix: 8)
                XCTAssertEqual(error?.message, "permissions \(octal) for '\(path)' are too open: a private key must be readable only by you; run: chmod 600 '\(path)'")
            }
        }
        XCTAssertEqual(chmod(path, 0o400), 0)
        XCTAssertNoThrow(try Identity.loadOrCreate(at: path), "read-only for us is fine")
    }

    func testAFileThatHoldsNoKeyIsRefusedWithAdvice() throws {
        let directory = try TemporaryDirectory()
        let certificateLike = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        for (name, contents) in [("text.pem", Array("not a key at all\n".utf8)), ("empty.pem", []),
                                 ("certificate.pem", Array(certificateLike.utf8)),
                                 ("huge.pem", [UInt8](repeating: 0x41, count: Identity.keyFileLimit + 1))] {
            let path = directory.write(contents, to: name)
            XCTAssertEqual(chmod(path, 0o600), 0)
            XCTAssertThrowsError(try Identity.loadOrCreate(at: path)) { error in
                let error = error as? SecureTransportError
                XCTAssertEqual(error?.code, .notAKey, name)
                XCTAssertEqual(error?.message.contains("move it away and svc will create a new key there"), true, "\(String(describing: error))")
            }
        }
    }

    func testAKeyOfAnotherKindIsRefused() throws {
        let directory = try TemporaryDirectory()
        // Valid private keys (OpenSSL reads them), but not what svc makes: Ed25519 and P-384.
        let others = [
            "ed25519.pem": """
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEINDRYITwwhozwWzlx4phCZKX1k0VYtsb436+rtZsY/d2
            -----END PRIVATE KEY-----

            """,
            "p384.pem": """
            -----BEGIN PRIVATE KEY-----
            MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCh7ZyDD6YXkaHI5sHm
            URvz/nP5cxXWHdcwMWVqZ2WwtVRWaQnOtu1x2Jy7PFJhcwGhZANiAARD4gxKA7rL
            QOw3lascomw1W6Epao4CaemCtVfcT//tyhcqTplTIsin3rA2aBx8OfPSNpc71mnL
            qv/Cjd7O9o3C4rOiNDPBAJmXK+IT9BDuNqPs6dskC8UwSMJ3CG3EptE=
            -----END PRIVATE KEY-----

            """,
        ]
        for (name, pem) in others {
            let bytes = Array(pem.utf8)
            let parsed: OpaquePointer? = bytes.withUnsafeBytes { buffer in
                let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))
                defer { BIO_free(bio) }
                return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
            XCTAssertNotNil(parsed, "\(name) is a key OpenSSL reads")
            EVP_PKEY_free(parsed)
            let path = directory.write(bytes, to: name)
            XCTAssertEqual(chmod(path, 0o600), 0)
            XCTAssertThrowsError(try Identity.loadOrCreate(at: path)) { error in
                XCTAssertEqual((error as? SecureTransportError)?.code, .notAKey, name)
            }
        }
    }

    func testAMissingDirectoryIsNotCreatedForAGivenPath() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/missing/identity.pem"
        XCTAssertThrowsError(try Identity.loadOrCreate(at: path)) { error in
            let error = error as? SecureTransportError
            XCTAssertEqual(error?.code, .keyFileUnusable)
            XCTAssertEqual(error?.message.contains("its directory does not exist"), true, "\(String(describing: error))")
        }
    }

    func testTheDefaultPathIsUnderXDGConfigHomeInADirectoryOnlyWeCanEnter() throws {
        let directory = try TemporaryDirectory()
        let saved = getenv("XDG_CONFIG_HOME").map { String(cString: $0) }
        defer { if let saved { setenv("XDG_CONFIG_HOME", saved, 1) } else { unsetenv("XDG_CONFIG_HOME") } }
        setenv("XDG_CONFIG_HOME", directory.path + "/config", 1)
        let path = try Identity.defaultPath()
        XCTAssertEqual(path, directory.path + "/config/svc/identity.pem")
        XCTAssertEqual(mode(of: directory.path + "/config/svc"), 0o700)
        XCTAssertEqual(try Identity.defaultPath(), path, "an existing directory is fine")
        XCTAssertTrue(try Identity.loadOrCreate(at: path).wasCreated)
    }
}
