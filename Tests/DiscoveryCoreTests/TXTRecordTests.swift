import DiscoveryCore
import XCTest

final class TXTRecordTests: XCTestCase {
    func testEncodesKeyValueEmptyValueAndBareKey() throws {
        let txt = try TXTRecord(items: ["k=v", "empty=", "flag"])
        XCTAssertEqual(txt.encoded(), [3] + Array("k=v".utf8) + [6] + Array("empty=".utf8) + [4] + Array("flag".utf8))
        XCTAssertEqual(txt["k"], .some(Array("v".utf8)))
        XCTAssertEqual(txt["empty"], .some([]))
        XCTAssertEqual(txt["flag"], .some(nil))
        XCTAssertTrue(txt["missing"] == nil, "no such key")
        XCTAssertEqual(txt.string(forKey: "K"), "v", "keys are case-insensitive")
    }

    func testEmptyRecordIsOneZeroByte() throws {
        XCTAssertEqual(TXTRecord().encoded(), [0])
        XCTAssertEqual(try TXTRecord(decoding: [0]).entries, [])
        XCTAssertEqual(try TXTRecord(decoding: []).entries, [])
    }

    func testValueMayContainEquals() throws {
        let txt = try TXTRecord(items: ["url=a=b"])
        XCTAssertEqual(txt.string(forKey: "url"), "a=b")
        XCTAssertEqual(try TXTRecord(decoding: txt.encoded()), txt)
    }

    func testDecodesTheLastItemEvenWhenItEndsExactlyAtTheEnd() throws {
        let bytes: [UInt8] = [3] + Array("a=1".utf8) + [3] + Array("b=2".utf8)
        let txt = try TXTRecord(decoding: bytes)
        XCTAssertEqual(txt.entries.map(\.key), ["a", "b"])
        XCTAssertEqual(txt.string(forKey: "b"), "2")
    }

    func testFirstDuplicateWinsAndKeysAreCaseInsensitive() throws {
        let bytes: [UInt8] = [3] + Array("a=1".utf8) + [3] + Array("A=2".utf8)
        let txt = try TXTRecord(decoding: bytes)
        XCTAssertEqual(txt.entries.count, 1)
        XCTAssertEqual(txt.string(forKey: "a"), "1")
    }

    func testSkipsEmptyItemsAndItemsWithoutAKey() throws {
        let bytes: [UInt8] = [0, 2] + Array("=x".utf8) + [1] + Array("k".utf8)
        XCTAssertEqual(try TXTRecord(decoding: bytes).entries, [TXTRecord.Entry(key: "k", value: nil)])
    }

    func testRejectsAnItemRunningPastTheEnd() {
        XCTAssertThrowsError(try TXTRecord(decoding: [5] + Array("ab".utf8))) { error in
            XCTAssertEqual((error as! DiscoveryError).code, .invalidTXTRecord)
        }
    }

    func testEnforcesKeyAndItemRules() throws {
        XCTAssertThrowsError(try TXTRecord(items: ["=v"]))
        XCTAssertThrowsError(try TXTRecord(items: ["ké=v"]))
        XCTAssertThrowsError(try TXTRecord(items: ["k\u{1}=v"]))
        XCTAssertNoThrow(try TXTRecord(items: ["k=" + String(repeating: "v", count: 253)]))
        XCTAssertThrowsError(try TXTRecord(items: ["k=" + String(repeating: "v", count: 254)])) { error in
            XCTAssertTrue((error as! DiscoveryError).message.contains("255"))
        }
    }

    func testSettingAKeyAgainReplacesIt() throws {
        var txt = try TXTRecord(items: ["a=1", "b=2"])
        try txt.set("A", Array("3".utf8))
        XCTAssertEqual(txt.entries.map(\.key), ["A", "b"])
        XCTAssertEqual(txt.string(forKey: "a"), "3")
    }

    func testRandomRecordsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var txt = TXTRecord()
            for index in 0..<Int.random(in: 0...12, using: &generator) {
                let key = "k\(index)" + String(repeating: "x", count: Int.random(in: 0...8, using: &generator))
                let value: [UInt8]? = Bool.random(using: &generator) ? nil
                    : (0..<Int.random(in: 0...100, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                try txt.set(key, value)
            }
            XCTAssertEqual(try TXTRecord(decoding: txt.encoded()), txt)
        }
    }
}
