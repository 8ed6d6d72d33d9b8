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
        .history(time: 1_764_607_205_123, from: "alice", text: "said\tbefore"),
        .fileOffer(.init(id: 3, size: 1 << 40, digest: Array(0..<32), name: "../x.bin")),
        .fileAccept(id: 3, offset: 12345),
        .fileChunk(id: 3, data: [0, 1, 2, 255]),
        .fileEnd(id: 3, digest: nil),
        .fileEnd(id: 3, digest: Array(100..<132)),
        .fileResult(id: 3, status: .checksumMismatch, message: "no"),
        .fileOfferTo(.init(id: 4, size: 5, digest: Array(repeating: 1, count: 32), name: "a b.txt"), to: "Living room"),
        .fileOfferFrom(.init(id: 1 << 31, size: 0, digest: Array(repeating: 2, count: 32), name: "c"), from: "bob", host: 0x0123_4567_89AB_CDEF),
        .fileCancel(id: 6, reason: "bob left the room"),
        .fileCredit(id: 7, through: 1 << 40),
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

    /// TEXT is written whole by its own path (`PayloadWriter.appendTextFrame`): the same bytes
    /// as the general one (`frame`, through `writePayload`), on the stack or in place, with
    /// names at and past the 65,535 bytes a `str` holds (cut by the general path), and refused
    /// whole when its payload would pass the limit.
    func testTextIsEncodedWholeAsTheGeneralPathEncodesIt() throws {
        let long = String(repeating: "é", count: 32_768) // 65,536 bytes: one past a str's 65,535
        let texts: [(String, String, String)] = [
            ("", "", ""), ("", "", String(repeating: "x", count: 60)), ("ann", "", "hi"), ("bo", "ann", "grüße 👋"),
            ("", "", String(repeating: "y", count: 1014)), ("", "", String(repeating: "y", count: 1013)), // 1,024 bytes and one past
            (String(repeating: "n", count: 255), "bo", String(repeating: "z", count: Message.maximumTextBytes)),
            (String(repeating: "a", count: 65_535), "", "t"), (String(repeating: "a", count: 65_536), "", "t"), (long, "", "t"),
            ("", long, "t"),
        ]
        for (from, to, text) in texts {
            let message = Message.text(from: from, to: to, text: text)
            var buffer: [UInt8] = [0xAA, 0xBB]
            XCTAssertTrue(message.encode(into: &buffer))
            XCTAssertEqual(buffer, [0xAA, 0xBB] + message.frame.encoded, "from \(from.utf8.count), to \(to.utf8.count), text \(text.utf8.count) bytes")
        }
        var buffer: [UInt8] = [1, 2, 3]
        XCTAssertFalse(Message.text(from: "", to: "", text: String(repeating: "x", count: Frame.maximumPayload - 3)).encode(into: &buffer))
        XCTAssertFalse(Message.text(from: "", to: "", text: String(repeating: "x", count: Frame.maximumPayload + 1)).encode(into: &buffer))
        XCTAssertEqual(buffer, [1, 2, 3], "the buffer is left as it was")
        XCTAssertTrue(Message.text(from: "", to: "", text: String(repeating: "x", count: Frame.maximumPayload - 4)).encode(into: &buffer))
        XCTAssertEqual(buffer.count, 3 + Frame.headerSize + Frame.maximumPayload)
        XCTAssertEqual(try Message(decoding: Message.text(from: "ann", to: "bo", text: "hé").frame), .text(from: "ann", to: "bo", text: "hé"))
    }

    func testFileChunkHeaderPlusDataIsAFileChunkFrame() throws {
        let data: [UInt8] = [9, 8, 7]
        var decoder = FrameDecoder()
        decoder.feed(Message.fileChunkHeader(id: 42, dataCount: data.count) + data)
        XCTAssertEqual(try Message(decoding: try XCTUnwrap(decoder.next())), .fileChunk(id: 42, data: data[...]))
        XCTAssertEqual(Message.fileChunkHeader(id: 42, dataCount: 3) + data, Message.fileChunk(id: 42, data: data[...]).frame.encoded)
    }

    func testFileEndCarriesAWholeDigestOrNone() throws {
        XCTAssertEqual(Message.fileEnd(id: 9, digest: Array(0..<32)).frame.payload, [0, 0, 0, 9] + Array(0..<32))
        XCTAssertEqual(Message.fileEnd(id: 9, digest: nil).frame.payload, [0, 0, 0, 9])
        for extra in [1, 31, 33, 64] {
            XCTAssertThrowsError(try Message(decoding: Frame(type: 0x23, payload: [0, 0, 0, 9] + Array(repeating: 1, count: extra))), "\(extra)") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .malformedFrame)
            }
        }
        XCTAssertThrowsError(try Message(decoding: Frame(type: 0x23, payload: [0, 0, 9])))
    }

    func testHelloLayout() {
        // Capabilities 255: rooms, files, resume, acknowledged text, relayed files, history, member keys, streamed files.
        XCTAssertEqual(Message.hello(.init(name: "a")).frame.payload, Array("P2PM".utf8) + [0, 1, 0, 0, 0, 255, 0, 1, 0x61])
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

final class MessageLimitTests: XCTestCase {
    func payload(_ message: Message, replacingLast count: Int = 0, with bytes: [UInt8] = []) -> Frame {
        let frame = message.frame
        return Frame(type: frame.type, payload: Array(frame.payload.dropLast(count)) + bytes)
    }

    func testTextAtTheLimitDecodesAndOneByteMoreIsAnError() throws {
        let longest = String(repeating: "x", count: Message.maximumTextBytes)
        XCTAssertEqual(try Message(decoding: Message.text(from: "", to: "", text: longest).frame),
                       .text(from: "", to: "", text: longest))
        XCTAssertThrowsError(try Message(decoding: Message.text(from: "", to: "", text: longest + "y").frame)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .malformedFrame)
            XCTAssertEqual((error as? ProtocolError)?.message, "TEXT text is 65537 bytes; the limit is 65536")
        }
    }

    func testInvalidUTF8IsAnErrorAtDecodeTime() {
        let frame = payload(.text(from: "", to: "", text: ""), with: [0x61, 0xFF, 0x62])
        XCTAssertThrowsError(try Message(decoding: frame)) { error in
            XCTAssertEqual((error as? ProtocolError)?.message, "TEXT text is not valid UTF-8")
        }
        // A HELLO name that is not UTF-8 ends the handshake: invalid-name closes.
        let hello = payload(.hello(.init(name: "ab")), replacingLast: 2, with: [0xC3, 0x28])
        XCTAssertThrowsError(try Message(decoding: hello)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .invalidName)
        }
        let goodbye = payload(.goodbye(reason: ""), with: [0xE2, 0x82])
        XCTAssertThrowsError(try Message(decoding: goodbye))
    }

    /// Text is checked eight bytes at a time for ASCII first: a byte of 0x80 or more in any
    /// position of a word, or in the tail after the last whole word, must still be found, and
    /// the text decoded exactly as the standard validator does.
    func testTextDecodingAgreesWithTheStandardValidatorAtEveryPosition() throws {
        let cases: [[UInt8]] = [[0xFF], [0xC3, 0xA9], [0xC3], [0xE2, 0x82, 0xAC], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98, 0x80], [0x80]]
        for length in 0...20 {
            for position in 0...length {
                for inserted in cases {
                    var bytes = Array(repeating: UInt8(ascii: "x"), count: length)
                    bytes.insert(contentsOf: inserted, at: position)
                    let frame = payload(.text(from: "", to: "", text: ""), with: bytes)
                    if let expected = String(validating: bytes, as: UTF8.self) {
                        XCTAssertEqual(try Message(decoding: frame), .text(from: "", to: "", text: expected), "\(bytes)")
                    } else {
                        XCTAssertThrowsError(try Message(decoding: frame), "\(bytes)") { error in
                            XCTAssertEqual((error as? ProtocolError)?.message, "TEXT text is not valid UTF-8")
                        }
                    }
                }
            }
            let ascii = String(repeating: "y", count: length)
            XCTAssertEqual(try Message(decoding: Message.text(from: ascii, to: "", text: ascii).frame), .text(from: ascii, to: "", text: ascii))
        }
    }

    func testNamesAndNotesHaveLimits() {
        let name = String(repeating: "n", count: Message.maximumNameBytes + 1)
        XCTAssertThrowsError(try Message(decoding: Message.hello(.init(name: name)).frame)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .invalidName)
        }
        XCTAssertThrowsError(try Message(decoding: Message.presence(.list, names: [name]).frame))
        XCTAssertThrowsError(try Message(decoding: Message.welcome(name: name).frame))
        let note = String(repeating: "e", count: Message.maximumNoteBytes + 1)
        XCTAssertThrowsError(try Message(decoding: Message.error(code: 1, message: note).frame))
        XCTAssertThrowsError(try Message(decoding: Message.fileResult(id: 1, status: .refused, message: note).frame))
        XCTAssertNoThrow(try Message(decoding: Message.goodbye(reason: String(note.dropLast())).frame))
    }

    func testTheLargestRelayedTextFitsAFrame() {
        // What a server builds from the largest TEXT a peer may send, with the longest names.
        let name = String(repeating: "n", count: Message.maximumNameBytes)
        var buffer: [UInt8] = []
        XCTAssertTrue(Message.text(from: name, to: name, text: String(repeating: "x", count: Message.maximumTextBytes)).encode(into: &buffer))
    }

    func testAnOversizeMessageIsRefusedByTheEncoderInsteadOfTrapping() {
        var buffer: [UInt8] = [1, 2, 3]
        XCTAssertFalse(Message.fileChunk(id: 1, data: ArraySlice(repeating: 0, count: Frame.maximumPayload)).encode(into: &buffer))
        XCTAssertEqual(buffer, [1, 2, 3], "the buffer is left as it was")
    }

    func testLongPresenceListsAreSplitIntoFramesThatFit() throws {
        let names = (0..<10_000).map { String(repeating: "m", count: 200) + String($0) }
        let messages = Message.presence(.list, splitting: names)
        XCTAssertGreaterThan(messages.count, 1)
        var all: [String] = []
        for message in messages {
            var buffer: [UInt8] = []
            XCTAssertTrue(message.encode(into: &buffer))
            guard case .presence(.list, let part) = try Message(decoding: message.frame) else { return XCTFail() }
            all += part
        }
        XCTAssertEqual(all, names)
        XCTAssertEqual(Message.presence(.left, splitting: []), [.presence(.left, names: [])])
    }
}
