import TransportCore
import XCTest

/// RFC 4648 §10's vectors, both spellings, and what is refused.
final class Base64Tests: XCTestCase {
    let vectors: [(String, String)] = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                                       ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]

    func testTheRFCVectorsBothWays() {
        for (plain, encoded) in vectors {
            let bytes = Array(plain.utf8)
            XCTAssertEqual(Base64.decodePadded(encoded), bytes, encoded)
            let unpadded = String(encoded.prefix { $0 != "=" })
            XCTAssertEqual(Base64.encodeUnpadded(bytes), unpadded)
            XCTAssertEqual(Base64.decodeUnpadded(unpadded), bytes, unpadded)
        }
    }

    func testBadLengthsCharactersPaddingAndLeftoverBitsAreRefused() {
        for bad in ["Zg=", "Zg", "Z===", "Zm9v=", "Zm=v", "Zm9v\n", "Zh==", "Zm9vYg=*", "===="] {
            XCTAssertNil(Base64.decodePadded(bad), bad)
        }
        for bad in ["Z", "Zh", "Zm9", "Zm9vY", "Zg=="] {
            XCTAssertNil(Base64.decodeUnpadded(bad), bad)
        }
    }
}
