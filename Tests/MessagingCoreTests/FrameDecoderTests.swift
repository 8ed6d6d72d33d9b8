import MessagingCore
import XCTest

final class FrameDecoderTests: XCTestCase {
    let frames = [
        Frame(type: 0x10, payload: Array("hello".utf8)),
        Frame(type: 0x11, payload: []),
        Frame(type: 0x22, payload: (0..<300).map { UInt8($0 % 251) }),
        Frame(type: 0x7777, payload: [1, 2, 3]),
    ]
    var stream: [UInt8] { frames.flatMap(\.encoded) }

    func decode(_ chunks: [ArraySlice<UInt8>]) throws -> [Frame] {
        var decoder = FrameDecoder()
        var out: [Frame] = []
        for chunk in chunks {
            decoder.feed(chunk)
            while let frame = try decoder.next() { out.append(frame) }
        }
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        return out
    }

    func testHeaderLayoutIsBigEndian() {
        XCTAssertEqual(Frame(type: 0x0102, flags: 0x0304, payload: [9]).encoded, [0, 0, 0, 1, 1, 2, 3, 4, 9])
    }

    func testManyFramesInOneRead() throws {
        XCTAssertEqual(try decode([stream[...]]), frames)
    }

    func testOneByteAtATime() throws {
        let bytes = stream
        XCTAssertEqual(try decode(bytes.indices.map { bytes[$0...$0] }), frames)
    }

    func testSplitAtEveryByteBoundary() throws {
        let bytes = stream
        for split in 0...bytes.count {
            XCTAssertEqual(try decode([bytes[..<split], bytes[split...]]), frames, "split at \(split)")
        }
    }

    func testTruncatedFrameWaitsForMore() throws {
        var decoder = FrameDecoder()
        let bytes = frames[2].encoded
        decoder.feed(bytes.dropLast())
        XCTAssertNil(try decoder.next())
        decoder.feed(bytes.suffix(1))
        XCTAssertEqual(try decoder.next(), frames[2])
    }

    func testOversizeLengthIsRejectedFromTheHeaderAlone() {
        var decoder = FrameDecoder()
        decoder.feed([0xFF, 0xFF, 0xFF, 0xFF, 0, 0x10, 0, 0]) // claims 4 GiB
        XCTAssertThrowsError(try decoder.next()) { error in
            XCTAssertEqual((error as! ProtocolError).code, .frameTooLarge)
        }
        XCTAssertEqual(decoder.bufferedByteCount, 8, "nothing was allocated for the payload")
        var small = FrameDecoder(maximumPayload: 10)
        small.feed(Frame(type: 1, payload: Array(repeating: 0, count: 11)).encoded)
        XCTAssertThrowsError(try small.next())
    }

    func testExactlyTheMaximumIsAccepted() throws {
        let big = Frame(type: 0x22, payload: Array(repeating: 7, count: Frame.maximumPayload))
        XCTAssertEqual(try decode([big.encoded[...]]), [big])
    }

    func testRandomizedRoundTripsOfThousandsOfFrames() throws {
        var generator = SystemRandomNumberGenerator()
        let many = (0..<3000).map { _ in
            Frame(type: UInt16.random(in: 0...0xFFFF, using: &generator),
                  payload: (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        let bytes = many.flatMap(\.encoded)
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 1...5000, using: &generator))
            chunks.append(bytes[start..<end])
            start = end
        }
        XCTAssertEqual(try decode(chunks), many)
    }
}
