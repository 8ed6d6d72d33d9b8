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

    /// `nextMessage` reads each frame where it lies in the buffer: the same messages and errors
    /// as `next()` and `Message(decoding:)`, a frame that does not decode consumed and the
    /// stream going on after it, in any split.
    func testMessagesDecodedInPlaceMatchDecodedFrames() throws {
        let messages: [Message] = [
            .hello(Message.Hello(name: "ann")), .text(from: "", to: "", text: String(repeating: "x", count: 60)),
            .text(from: "bo", to: "ann", text: "grüße 👋"), .who, .fileChunk(id: 3, data: [1, 2, 3][...]),
            .presence(.joined, names: ["ann", "bo"]), .codeConfirm(tag: Array(repeating: 9, count: 64)),
        ]
        var mixed = messages.map(\.frame)
        mixed.insert(Frame(type: 0x10, payload: [0, 0, 0, 0, 0xFF, 0xFE]), at: 2) // TEXT that is not UTF-8
        mixed.insert(Frame(type: 0x7777, payload: [1]), at: 4) // unknown type
        mixed.insert(Frame(type: 0x05, payload: [1, 2]), at: 6) // PING cut short
        let bytes = mixed.flatMap(\.encoded)
        for chunkSize in [1, 3, 7, 64, bytes.count] {
            var decoder = FrameDecoder()
            var decoded: [FrameDecoder.DecodedFrame] = []
            var start = 0
            while start < bytes.count {
                decoder.feed(bytes[start..<min(bytes.count, start + chunkSize)])
                start += chunkSize
                while let next = try decoder.nextMessage(memberKeys: false) { decoded.append(next) }
            }
            XCTAssertEqual(decoder.bufferedByteCount, 0)
            XCTAssertEqual(decoded.map(\.payloadCount), mixed.map(\.payload.count))
            for (frame, inPlace) in zip(mixed, decoded) {
                let expected = Result { () throws(ProtocolError) in try Message(decoding: frame) }
                switch (expected, inPlace.message) {
                case (.success(let a), .success(let b)): XCTAssertEqual(a, b)
                case (.failure(let a), .failure(let b)): XCTAssertEqual(a.code, b.code); XCTAssertEqual(a.message, b.message)
                default: XCTFail("frame 0x\(String(frame.type, radix: 16)): \(expected) against \(inPlace.message)")
                }
            }
        }
        var oversize = FrameDecoder(maximumPayload: 10)
        oversize.feed(Frame(type: 0x10, payload: Array(repeating: 0, count: 11)).encoded)
        XCTAssertThrowsError(try oversize.nextMessage(memberKeys: false)) { error in
            XCTAssertEqual((error as! ProtocolError).code, .frameTooLarge)
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
