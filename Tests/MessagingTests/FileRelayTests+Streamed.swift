import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Relayed files between members with and without `.streamedFiles`: the digest reaches a
/// recipient that streams with `FILE_END` whichever way the sender gave it, and a streamed
/// offer never reaches a recipient that would need its digest first.
extension FileRelayTests {
    /// The messages the server sends `member`, decoded as they go.
    func recordSent(to member: Member) -> () -> [Message] {
        var messages: [Message] = []
        var decoder = FrameDecoder(maximumPayload: Frame.maximumPayload)
        member.serverEnd.tap = { bytes in
            decoder.feed(bytes)
            while let frame = try? decoder.next() { if let message = try? Message(decoding: frame) { messages.append(message) } }
        }
        return { messages }
    }

    func sha256(_ bytes: [UInt8]) -> [UInt8] {
        let hash = SHA256()
        hash.update(bytes)
        return hash.finish()
    }

    func testAStreamedFileGoesThroughTheRoomWithItsDigestAtTheEnd() throws {
        let source = directory.write(content, to: "photo.jpg")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil, capabilities: .all)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), capabilities: .all)
        let toBob = recordSent(to: bob)
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()

        let sent = try XCTUnwrap(alice.results.first).get()
        XCTAssertEqual(sent.digest, sha256(content))
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/photo.jpg"), content)
        guard case .fileOfferFrom(let offer, "alice", _) = toBob().first(where: { if case .fileOfferFrom = $0 { true } else { false } }) else {
            return XCTFail("\(toBob())")
        }
        XCTAssertNotEqual(offer.digest, sha256(content), "offered by its resume tag")
        XCTAssertTrue(toBob().contains(.fileEnd(id: offer.id, digest: sha256(content))))
        XCTAssertEqual(alice.errors + bob.errors, [])
        XCTAssertEqual(server.relayedTransferCount, 0)
    }

    func testAnOlderSendersFileReachesARecipientThatStreamsWithTheOfferedDigestAtTheEnd() throws {
        let source = directory.write(content, to: "old.bin")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil, capabilities: .beforeStreamedFiles)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), capabilities: .all)
        let toBob = recordSent(to: bob)
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()

        _ = try XCTUnwrap(alice.results.first).get()
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/old.bin"), content)
        guard case .fileOfferFrom(let offer, _, _) = toBob().first(where: { if case .fileOfferFrom = $0 { true } else { false } }) else {
            return XCTFail("\(toBob())")
        }
        XCTAssertEqual(offer.digest, sha256(content))
        XCTAssertTrue(toBob().contains(.fileEnd(id: offer.id, digest: sha256(content))), "the server adds the digest its offer named")
    }

    func testAStreamedFileIsNotOfferedToARecipientThatDoesNotStream() throws {
        let source = directory.write(Array(content.prefix(10)), to: "a.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil, capabilities: .all)
        let old = Member("old", server: server, scheduler: scheduler, inbox: try inbox("old"), capabilities: .beforeStreamedFiles)
        scheduler.run()
        alice.send(source, to: "old")
        scheduler.run()
        XCTAssertTrue(alice.failure.contains("does not announce streamed files"), alice.failure)
        XCTAssertTrue(old.events.isEmpty)
    }

    func testARelayedEndWithTheDigestMissingOrTwiceIsTheSendersProtocolError() throws {
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), capabilities: .all)
        let streaming = rawMember("streaming", host: 2, capabilities: .all)
        let older = rawMember("older", host: 3)
        scheduler.run()
        let data: [UInt8] = [1, 2, 3]
        streaming.send(.fileOfferTo(.init(id: 1, size: 3, digest: Array(repeating: 9, count: 32), name: "s"), to: "bob"))
        older.send(.fileOfferTo(.init(id: 1, size: 3, digest: sha256(data), name: "o"), to: "bob"))
        scheduler.run()
        for peer in [streaming, older] {
            peer.send(.fileChunk(id: 1, data: data[...]))
        }
        streaming.send(.fileEnd(id: 1, digest: nil))
        older.send(.fileEnd(id: 1, digest: sha256(data)))
        scheduler.run()
        func errors(_ peer: RawPeer) -> [String] { peer.messages.compactMap { if case .error(_, let text) = $0 { text } else { nil } } }
        XCTAssertTrue(errors(streaming).contains { $0.contains("lacks the file's SHA-256") }, "\(streaming.messages)")
        XCTAssertTrue(errors(older).contains { $0.contains("named the digest already") }, "\(older.messages)")
        XCTAssertTrue(bob.events.allSatisfy { if case .relayed(_, .stored) = $0 { false } else { true } })
        // Each transfer stays open: the proper end stores both files.
        streaming.send(.fileEnd(id: 1, digest: sha256(data)))
        older.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/s"), data)
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/o"), data)
    }
}
