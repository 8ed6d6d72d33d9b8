import Messaging
import XCTest

final class SHA256Tests: XCTestCase {
    func testKnownDigests() {
        XCTAssertEqual(hexString(SHA256().finish()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let hash = SHA256()
        hash.update(Array("ab".utf8))
        hash.update(Array("c".utf8))
        XCTAssertEqual(hexString(hash.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
