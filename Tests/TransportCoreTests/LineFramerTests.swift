import TransportCore
import XCTest

final class LineFramerTests: XCTestCase {
    let stream = Array("hello\r\nsecond line\n\nünïcödé\nlast".utf8)
    let expected = ["hello", "second line", "", "ünïcödé"]

    func lines(feeding chunks: [ArraySlice<UInt8>]) throws -> (lines: [String], rest: String?) {
        var framer = LineFramer()
        var lines: [String] = []
        for chunk in chunks { lines += try framer.feed(chunk).map { String(decoding: $0, as: UTF8.self) } }
        return (lines, framer.finish().map { String(decoding: $0, as: UTF8.self) })
    }

    func testAllAtOnce() throws {
        let result = try lines(feeding: [stream[...]])
        XCTAssertEqual(result.lines, expected)
        XCTAssertEqual(result.rest, "last")
    }

    func testOneByteAtATime() throws {
        let result = try lines(feeding: stream.indices.map { stream[$0...$0] })
        XCTAssertEqual(result.lines, expected)
        XCTAssertEqual(result.rest, "last")
    }

    func testSplitAtEveryBoundary() throws {
        for split in 0...stream.count {
            let result = try lines(feeding: [stream[..<split], stream[split...]])
            XCTAssertEqual(result.lines, expected, "split at \(split)")
            XCTAssertEqual(result.rest, "last")
        }
    }

    func testRandomChunks() throws {
        for _ in 0..<200 {
            var chunks: [ArraySlice<UInt8>] = []
            var start = 0
            while start < stream.count {
                let end = min(stream.count, start + Int.random(in: 1...7))
                chunks.append(stream[start..<end])
                start = end
            }
            XCTAssertEqual(try lines(feeding: chunks).lines, expected)
        }
    }

    func testRejectsALineOverTheLimitWithoutBufferingIt() {
        var framer = LineFramer(maximumLineLength: 8)
        XCTAssertEqual(try framer.feed(Array("12345678\n".utf8)), [Array("12345678".utf8)])
        XCTAssertThrowsError(try framer.feed(Array("123456789\n".utf8)))
        var unterminated = LineFramer(maximumLineLength: 8)
        XCTAssertThrowsError(try unterminated.feed(Array(repeating: UInt8(ascii: "x"), count: 100)))
    }

    func testFinishWithNothingPending() {
        var framer = LineFramer()
        XCTAssertNil(framer.finish())
    }
}
