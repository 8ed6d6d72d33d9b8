import MessagingCore
import XCTest

final class MessageTests: XCTestCase {
    let samples: [Message] = [
        .hello(.init(name: "alice")),
        .hello(.init(version: 7, capabilities: [.rooms], name: "打印机")),
        .welcome(name: "alice-2"),
        .goodbye(reason: "bye"),
        .error(code: 99, message: "from the future"),
        .ping(token: .max),
        .pong(token: 1),
        .text(from: "a", to: "", text: "hi all"),
        .text(from: "", to: "bob", text: "ünïcode \u{1B}"),
        .who,
        .presence(.list, names: ["server", "alice", "bob"]),
        .presence(.left, names: []),
        .session(id: .max, next: 7),
        .acknowledged(through: 8),
        .fileOffer(.init(id: 3, size: 1 << 40, digest: Array(0..<32), name: "../x.bin")),
        .fileAccept(id: 3, offset: 12345),
        .fileChunk(id: 3, data: [0, 1, 2, 255]),
        .fileEnd(id: 3),
        .fileResult(id: 3, status: .checksumMismatch, message: "no"),
    ]

    func testEveryMessageRoundTrips() throws {
        for message in samples {
            XCTAssertEqual(try Message(decoding: message.frame), message)
        }
    }

    func testEncodingIntoABufferAppendsTheFrameBytes() {
        var buffer: [UInt8] = [0xAA]
        for message in samples { message.encode(into: &buffer) }
        XCTAssertEqual(buffer, [0xAA] + samples.flatMap { $0.frame.encoded })
    }

    func testFileChunkHeaderPlusDataIsAFileChunkFrame() throws {
        let data: [UInt8] = [9, 8, 7]
        var decoder = FrameDecoder()
        decoder.feed(Message.fileChunkHeader(id: 42, dataCount: data.count) + data)
        XCTAssertEqual(try Message(decoding: try XCTUnwrap(decoder.next())), .fileChunk(id: 42, data: data))
        XCTAssertEqual(Message.fileChunkHeader(id: 42, dataCount: 3) + data, Message.fileChunk(id: 42, data: data).frame.encoded)
    }

    func testHelloLayout() {
        XCTAssertEqual(Message.hello(.init(name: "a")).frame.payload, Array("P2PM".utf8) + [0, 1, 0, 0, 0, 15, 0, 1, 0x61])
    }

    func testUnknownTypeAndFlagsAreReported() {
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x99, payload: []))) { error in
            XCTAssertEqual((error as! ProtocolError).code, .unknownType)
            XCTAssertFalse((error as! ProtocolError).code.closesConnection)
        }
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x11, flags: 1, payload: []))) { error in
            XCTAssertEqual((error as! ProtocolError).code, .malformedFrame)
        }
    }

    func testMalformedPayloadsAreRejected() {
        let cases: [Frame] = [
            Frame(type: 0x05, payload: [1, 2, 3]),                       // PING too short
            Frame(type: 0x05, payload: Array(repeating: 0, count: 9)),   // PING too long
            Frame(type: 0x10, payload: [0, 5, 0x61]),                    // TEXT str runs past the end
            Frame(type: 0x12, payload: [9, 0, 0]),                       // PRESENCE unknown kind
            Frame(type: 0x24, payload: [0, 0, 0, 1, 7]),                 // FILE_RESULT unknown status
            Frame(type: 0x20, payload: [0, 0, 0, 1] + Array(repeating: 0, count: 8) + [1, 2]), // digest short
        ]
        for frame in cases {
            XCTAssertThrowsError(try Message(decoding: frame), "\(frame)") { error in
                XCTAssertEqual((error as! ProtocolError).code, .malformedFrame)
            }
        }
    }

    func testAHelloFromSomethingElseIsBadMagic() {
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x01, payload: Array("HTTP/1.1".utf8)))) { error in
            XCTAssertEqual((error as! ProtocolError).code, .badMagic)
            XCTAssertTrue((error as! ProtocolError).code.closesConnection)
        }
    }
}
