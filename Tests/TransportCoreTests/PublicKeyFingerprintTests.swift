import TransportCore
import XCTest

final class PublicKeyFingerprintTests: XCTestCase {
    func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    /// Vectors computed outside Swift: `openssl dgst -sha256 -binary | base64 | tr -d =`.
    func testKnownVectors() throws {
        // SHA-256 of "abc" (FIPS 180-2), as python3's hashlib and base64 print it.
        let abc = try XCTUnwrap(PublicKeyFingerprint(bytes: bytes(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")))
        XCTAssertEqual(abc.full, "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")
        XCTAssertEqual(abc.short, "ungWv48Bz+pB")
        XCTAssertEqual(abc.description, abc.full)
        // The SHA-256 of a P-256 key's DER SubjectPublicKeyInfo from
        // `openssl pkey -pubout -outform DER` (what i2d_PUBKEY gives).
        let key = try XCTUnwrap(PublicKeyFingerprint(bytes: bytes(hex: "5cfb87f8d36782ce67435d3400ad1870aa971d7e992b3ae82a294fde11d8dbca")))
        XCTAssertEqual(key.full, "SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")
        let counting = try XCTUnwrap(PublicKeyFingerprint(bytes: Array(0..<32)))
        XCTAssertEqual(counting.full, "SHA256:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
    }

    func testRoundTripThroughTheFullForm() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let raw = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let key = try XCTUnwrap(PublicKeyFingerprint(bytes: raw))
            XCTAssertEqual(key.full.count, 7 + 43)
            XCTAssertEqual(PublicKeyFingerprint(key.full), key)
            XCTAssertEqual(PublicKeyFingerprint(key.full.dropFirst(7)), key, "without SHA256:")
            XCTAssertEqual(PublicKeyFingerprint("sha256:" + key.full.dropFirst(7)), key, "the prefix in any case")
            XCTAssertTrue(key.matches(key.full))
            XCTAssertTrue(PublicKeyFingerprint.isWellFormedPrefix(key.full))
        }
    }

    func testPrefixMatching() throws {
        let key = try XCTUnwrap(PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"))
        XCTAssertTrue(key.matches("ungWv48Bz+pB"), "the short form")
        XCTAssertTrue(key.matches("SHA256:ungWv48Bz+pB"))
        XCTAssertTrue(key.matches("ungWv48Bz+pBQUDeX"), "any prefix of at least 12")
        XCTAssertFalse(key.matches("ungWv48Bz+p"), "11 characters are too few")
        XCTAssertFalse(key.matches("ungwv48Bz+pB"), "base64 is case-sensitive")
        XCTAssertFalse(key.matches("XPuH+NNngs5n"))
        XCTAssertFalse(key.matches("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0A"), "longer than the key")
        XCTAssertFalse(key.matches(""))

        XCTAssertTrue(PublicKeyFingerprint.isWellFormedPrefix("ungWv48Bz+pB"))
        XCTAssertTrue(PublicKeyFingerprint.isWellFormedPrefix("SHA256:ungWv48Bz+pB"))
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix("ungWv48Bz+p"))
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix("ungWv48Bz-pB"), "not base64")
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix("ungWv48Bz+pB="), "no padding")
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix("MD5:ungWv48Bz+pB"))
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix(String(repeating: "A", count: 44)))
        // 43 characters must be a whole key: the last one carries 2 bits that must be zero.
        XCTAssertFalse(PublicKeyFingerprint.isWellFormedPrefix("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa1"))
    }

    func testMalformedInputIsRefused() {
        XCTAssertNil(PublicKeyFingerprint(bytes: Array(repeating: 0, count: 31)))
        XCTAssertNil(PublicKeyFingerprint(bytes: Array(repeating: 0, count: 33)))
        XCTAssertNil(PublicKeyFingerprint(bytes: []))
        let full = "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"
        for text in [
            "", "SHA256:", "SHA256:ungWv48Bz+pB", String(full.dropLast()), full + "A", full + "=",
            "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa1", // nonzero leftover bits
            "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0", // base64url is not accepted
            "SHA256: ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0", "MD5:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0",
            "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFé0",
        ] {
            XCTAssertNil(PublicKeyFingerprint(text), text)
        }
    }

    func testSafetyCode() {
        XCTAssertEqual(SecureSession.safetyCode(fromExported: [0, 0, 0, 0, 0, 0, 0, 0]), "000 000 000 000")
        XCTAssertEqual(SecureSession.safetyCode(fromExported: [0, 0, 0, 0, 0, 0, 0, 42]), "000 000 000 042")
        // 0xFFFFFFFFFFFFFFFF = 18446744073709551615, modulo 10^12.
        XCTAssertEqual(SecureSession.safetyCode(fromExported: Array(repeating: 0xFF, count: 8)), "073 709 551 615")
        // 0x0102030405060708 = 72623859790382856.
        XCTAssertEqual(SecureSession.safetyCode(fromExported: [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]), "859 790 382 856")
        XCTAssertNil(SecureSession.safetyCode(fromExported: Array(repeating: 0, count: 7)))
        XCTAssertNil(SecureSession.safetyCode(fromExported: Array(repeating: 0, count: 9)))
    }
}
