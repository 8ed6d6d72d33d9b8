import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Files between members, relayed by a `RoomServer`: members on in-memory streams, disk work
/// and timers on one manual scheduler, so every transfer runs deterministically.
final class FileRelayTests: XCTestCase {
    /// A member: a link, its transfers, and what it heard.
    final class Member {
        let stream: InMemoryStream
        /// The server's end of the stream.
        let serverEnd: InMemoryStream
        let link: PeerLink
        let files: FileTransfers
        var events: [FileTransfers.Event] = []
        var results: [Result<FileTransfers.SentFile, FileError>] = []
        var errors: [String] = []
        /// TEXT lines heard, as "from: text".
        var texts: [String] = []
        var ended = false

        /// `host`: the last byte of its IPv4 address, 10.0.0.x (none: the host "unknown").
        init(_ name: String, server: RoomServer, scheduler: ManualScheduler, inbox: Inbox?, capabilities: Message.Capabilities = .beforeStreamedFiles, host: UInt8? = nil) {
            let endpoint = host.map { SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, $0])!, port: 50000) }
            (stream, serverEnd) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
            link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
            var record: (FileTransfers.Event) -> Void = { _ in }
            files = FileTransfers(link: link, inbox: inbox, disk: scheduler, hashing: scheduler) { record($0) }
            record = { [unowned self] in events.append($0) }
            let files = files
            link.start(onMessage: { [unowned self] message in
                if files.handle(message) { return }
                if case .error(_, let text) = message { errors.append(text) }
                if case .text(let from, _, let text) = message { texts.append(from + ": " + text) }
            }, onEnd: { [unowned self] reason in
                files.linkEnded(reason)
                ended = true
            })
            server.accept(serverEnd)
            link.send(.hello(.init(capabilities: capabilities, name: name)))
        }

        func send(_ path: String, to member: String?) {
            files.send(path: path, to: member) { [unowned self] in results.append($0) }
        }

        /// The reason of the first failed send, or "" when none failed.
        var failure: String {
            for case .failure(let error) in results { return error.message }
            return ""
        }

        /// Failed receptions, relayed ones unwrapped, with who sent them.
        var receiveFailures: [(from: String?, reason: String)] {
            events.compactMap {
                switch $0 {
                case .receiveFailed(_, let reason): (nil, reason)
                case .relayed(let from, .receiveFailed(_, let reason)): (from, reason)
                default: nil
                }
            }
        }
    }

    let scheduler = ManualScheduler()
    var directory: TemporaryDirectory!
    var server: RoomServer!
    var serverEvents: [RoomServer.Event] = []
    /// 3 MiB and a bit: several full chunks.
    let content: [UInt8] = (0..<(3 << 20) + 4321).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        server = makeServer(inbox: try Inbox(directory: directory.path + "/server"))
    }

    func makeServer(inbox: Inbox?) -> RoomServer {
        var options = RoomServer.Options(name: "Living room")
        options.inbox = inbox
        return RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { [unowned self] in serverEvents.append($0) }
    }

    func inbox(_ name: String) throws -> Inbox { try Inbox(directory: directory.path + "/" + name) }

    /// A member speaking raw frames (from the host 10.0.0.`host`, or from no address).
    func rawMember(_ name: String, host: UInt8? = nil, capabilities: Message.Capabilities = .beforeStreamedFiles) -> RawPeer {
        let endpoint = host.map { SocketEndpoint(address: IPAddress(bytes: [10, 0, 0, $0])!, port: 50000) }
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, peers: (nil, endpoint))
        let peer = RawPeer(mine)
        server.accept(theirs)
        peer.send(.hello(.init(capabilities: capabilities, name: name)))
        return peer
    }

    /// The first offer `peer` got from `sender` through the room.
    func offer(to peer: RawPeer, from sender: String) -> Message.FileOffer? {
        peer.messages.lazy.compactMap { if case .fileOfferFrom(let offer, sender, _) = $0 { offer } else { nil } }.first
    }

    /// An offer of `size` bytes that no other offer in the test has.
    func offer(_ id: UInt32, size: UInt64 = 10 << 20, name: String) -> Message.FileOffer {
        let hash = SHA256()
        hash.update(Array(name.utf8) + [UInt8(id & 0xFF), UInt8(id >> 8 & 0xFF)])
        return .init(id: id, size: size, digest: hash.finish(), name: name)
    }

    /// Runs the room one job at a time until some of a relayed file reached `member`.
    func runUntilData(reaches member: Member) {
        for _ in 0..<100_000 where !member.files.incoming.values.contains(where: { $0.received > 0 }) { scheduler.run(atMost: 1) }
    }

    func testAFileGoesFromOneMemberToAnotherThroughTheRoomVerified() throws {
        let source = directory.write(content, to: "photo.jpg")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()

        let sent = try XCTUnwrap(alice.results.first).get()
        XCTAssertEqual(sent.storedAs, "photo.jpg")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/photo.jpg"), content)
        XCTAssertEqual(TemporaryDirectory.names(in: directory.path + "/server"), [".partial"], "nothing went to the server's inbox")
        XCTAssertTrue(bob.events.contains { if case .relayed("alice", .stored) = $0 { true } else { false } }, "\(bob.events)")
        XCTAssertTrue(alice.events.contains { if case .relayed("bob", .sending) = $0 { true } else { false } }, "\(alice.events)")
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertLessThanOrEqual(bob.serverEnd.peakBufferedByteCount, 3 << 20, "the server passes data on only as bob's outbox drains")
        XCTAssertEqual(alice.errors + bob.errors, [])
    }

    func testASlowRecipientSlowsTheSenderByCreditAndTheServerKeepsAtMostItsMark() throws {
        let source = directory.write(content + content, to: "video.mp4")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        alice.send(source, to: "bob")
        bob.stream.pauseReading()
        scheduler.run()
        XCTAssertTrue(alice.results.isEmpty)
        XCTAssertLessThanOrEqual(bob.serverEnd.bufferedByteCount, 2 << 20, "at most the mark waits for bob")
        XCTAssertLessThanOrEqual(alice.serverEnd.peakBufferedByteCount, 1 << 16, "alice is not flooded with anything")
        bob.stream.resumeReading()
        scheduler.run()
        XCTAssertNoThrow(try XCTUnwrap(alice.results.first).get())
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/video.mp4"), content + content)
        XCTAssertLessThanOrEqual(bob.serverEnd.peakBufferedByteCount, 3 << 20)
    }

    func testARecipientThatStopsReadingNeverStopsTheServerReadingTheSender() throws {
        let source = directory.write(content + content, to: "video.mp4")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil)
        scheduler.run()
        alice.send(source, to: "bob")
        bob.stream.pauseReading()
        scheduler.run()
        // Alice sends only what she was granted, and the server reads all of it at once.
        XCTAssertLessThanOrEqual(bob.serverEnd.bufferedByteCount, (1 << 20) + (512 << 10) + 64, "at most the mark and a window wait for bob")
        XCTAssertLessThan(alice.stream.bufferedByteCount, 1 << 10, "nothing of alice's waits for the server to read it")
        // Her text goes on, and her pings are answered: she stays, and is heard.
        for second in stride(from: 15, through: 45, by: 15) {
            alice.link.send(.text(from: "", to: "carol", text: "still here at \(second) s"))
            scheduler.advance(by: .seconds(15))
        }
        XCTAssertEqual(carol.texts, ["alice: still here at 15 s", "alice: still here at 30 s", "alice: still here at 45 s"])
        XCTAssertFalse(alice.ended)
        XCTAssertEqual(alice.errors, [])
        XCTAssertLessThan(alice.stream.bufferedByteCount, 1 << 10)
        bob.stream.resumeReading()
        scheduler.run()
        XCTAssertNoThrow(try XCTUnwrap(alice.results.first).get())
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/video.mp4"), content + content)
        XCTAssertLessThanOrEqual(bob.serverEnd.peakBufferedByteCount, (1 << 20) + (512 << 10) + 64, "the bound held all along")
    }

    func testDataBeyondTheCreditIsTheSendersProtocolErrorAndEndsTheTransfer() throws {
        let mallory = rawMember("mallory")
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        mallory.send(.fileOfferTo(.init(id: 1, size: 3 << 20, digest: [UInt8](repeating: 7, count: 32), name: "big"), to: "bob"))
        scheduler.run()
        XCTAssertEqual(Array(mallory.messages.suffix(2)), [.fileAccept(id: 1, offset: 0), .fileCredit(id: 1, through: 512 << 10)],
                       "the accept, then the first window")
        bob.stream.pauseReading()
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 512 << 10)))
        scheduler.run()
        // Another window, bob's outbox being under its mark.
        XCTAssertEqual(mallory.messages.last, .fileCredit(id: 1, through: 1 << 20))
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 512 << 10)))
        scheduler.run()
        XCTAssertEqual(mallory.messages.last, .fileCredit(id: 1, through: 1 << 20), "no more while bob's outbox is at its mark")
        let credit: UInt64 = 1 << 20
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 1)))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.error(code: ProtocolError.Code.fileProtocol.rawValue,
                                                       message: "FILE_CHUNK for id 1 goes past offset \(credit), as far as FILE_CREDIT allowed")))
        XCTAssertTrue(mallory.messages.contains { if case .fileResult(1, .refused, _) = $0 { true } else { false } })
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertNil(mallory.closeReason, "a file-protocol error does not end the connection")
        bob.stream.resumeReading()
        scheduler.run()
        XCTAssertEqual(bob.receiveFailures.map(\.reason), ["the sender sent more data than the server let it; the data so far is kept, and sending the file again resumes"])
    }

    func testTheWatchdogCountsFromTheOfferAndOnlyDataRestartsIt() throws {
        let sender = rawMember("sender"), recipient = rawMember("recipient")
        /// Time passes; both show signs of life all along.
        func pass(_ seconds: Int) {
            for _ in 0..<seconds {
                scheduler.advance(by: .seconds(1))
                sender.send(.pong(token: 0))
                recipient.send(.pong(token: 0))
            }
        }
        scheduler.run()
        sender.send(.fileOfferTo(.init(id: 1, size: 3 << 20, digest: [UInt8](repeating: 7, count: 32), name: "big"), to: "recipient"))
        scheduler.run()
        let offered = try XCTUnwrap(recipient.messages.lazy.compactMap { if case .fileOfferFrom(let offer, _, _) = $0 { offer } else { nil } }.first)
        // The answer comes late, and the first window at once: within a minute of the offer.
        pass(59)
        recipient.send(.fileAccept(id: offered.id, offset: 0))
        scheduler.run()
        for _ in 0..<2 {
            sender.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 512 << 10)))
            scheduler.run()
        }
        pass(60)
        XCTAssertEqual(server.relayedTransferCount, 1, "two windows' worth within a minute of the offer is progress")
        pass(1)
        XCTAssertEqual(server.relayedTransferCount, 0, "but a minute without more is not")
        XCTAssertTrue(sender.messages.contains(.fileResult(id: 1, status: .refused, message: "sender sent less than 1048576 bytes in 60 s; send it again to resume")),
                      "\(sender.messages.suffix(3))")
    }

    func testOneHostTakesAtMostTwoOfARecipientsPlacesHoweverManyMembersItHas() throws {
        // Attack F2: two members of one host, each offering two files that never bring data.
        let mallory = rawMember("mallory", host: 5), mallet = rawMember("mallet", host: 5)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), host: 9)
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil, host: 7)
        scheduler.run()
        for id in 1...2 as ClosedRange<UInt32> {
            mallory.send(.fileOfferTo(offer(id, name: "slow\(id)"), to: "bob"))
            mallet.send(.fileOfferTo(offer(id, name: "slower\(id)"), to: "bob"))
        }
        scheduler.run()
        XCTAssertEqual(bob.files.incoming.count, 2, "the host's two places")
        XCTAssertEqual(server.relayedTransferCount, 2)
        let refusal = "members on your host are sending 2 files to bob at once already; wait for one to finish"
        XCTAssertEqual(mallet.messages.filter { if case .fileResult(_, .refused, refusal) = $0 { true } else { false } }.count, 2, "\(mallet.messages)")
        let source = directory.write(Array(content.prefix(5000)), to: "note.txt")
        carol.send(source, to: "bob")
        scheduler.run()
        XCTAssertNoThrow(try XCTUnwrap(carol.results.first).get(), "carol, on another host, still gets through to bob: \(carol.failure)")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/note.txt"), Array(content.prefix(5000)))
        // Eve's host takes bob's other two places; Dave, on a fourth host, takes one of them.
        let eve = rawMember("eve", host: 8)
        let dave = Member("dave", server: server, scheduler: scheduler, inbox: nil, host: 10)
        scheduler.run()
        for id in 1...2 as ClosedRange<UInt32> { eve.send(.fileOfferTo(offer(id, name: "eve\(id)"), to: "bob")) }
        scheduler.run()
        XCTAssertEqual(bob.files.incoming.count, 4)
        let other = directory.write(Array(content.prefix(7000)), to: "other.txt")
        dave.send(other, to: "bob")
        scheduler.run()
        XCTAssertNoThrow(try XCTUnwrap(dave.results.first).get(), "dave takes the place of the newest offer that brought nothing: \(dave.failure)")
        XCTAssertTrue(eve.messages.contains(.fileResult(id: 2, status: .refused,
                                                        message: "bob is receiving 4 files from members, most of them from your host; its place went to a file from another host; send it again to resume")),
                      "\(eve.messages.suffix(3))")
        XCTAssertEqual(server.relayedTransferCount, 3)
        // A cycle of offers that bring no data holds a place no longer than a minute each.
        scheduler.advance(by: .seconds(61))
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 1, status: .refused, message: "mallory sent less than 1048576 bytes in 60 s; send it again to resume")),
                      "\(mallory.messages.suffix(3))")
    }

    func testAFileEndBeforeAllTheDataEndsTheTransferAtOnceOnBothSides() throws {
        let mallory = rawMember("mallory", host: 5)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), host: 9)
        scheduler.run()
        mallory.send(.fileOfferTo(offer(1, size: 100, name: "short"), to: "bob"))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileAccept(id: 1, offset: 0)), "\(mallory.messages)")
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 40)))
        mallory.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 1, status: .refused, message: "FILE_END after 40 of the 100 bytes offered; send all of the file")),
                      "\(mallory.messages.suffix(3))")
        XCTAssertEqual(server.relayedTransferCount, 0, "no new minute for an end that comes short")
        XCTAssertEqual(bob.files.incoming.count, 0)
        let told = try XCTUnwrap(bob.receiveFailures.first)
        XCTAssertEqual(told.from, "mallory")
        XCTAssertTrue(told.reason.hasPrefix("the sender ended the file after 40 of its 100 bytes"), told.reason)
        XCTAssertEqual(bob.errors, [])
    }

    func testAHogCycleHoldsAPlaceNoLongerThanTheIdleTimeoutFromTheOffer() throws {
        // Attack F1: the hog's own recipient answers just before the check, and its sender
        // ends with no data just before the next one.
        let sender = rawMember("hog", host: 5), recipient = rawMember("sink", host: 6)
        /// Time passes; both show signs of life all along.
        func pass(_ seconds: Int) {
            for _ in 0..<seconds {
                scheduler.advance(by: .seconds(1))
                sender.send(.pong(token: 0))
                recipient.send(.pong(token: 0))
            }
        }
        scheduler.run()
        for cycle in 0..<3 {
            sender.send(.fileOfferTo(offer(1, name: "hog"), to: "sink"))
            scheduler.run()
            let offered = try XCTUnwrap(recipient.messages.lazy.compactMap { if case .fileOfferFrom(let offer, _, _) = $0 { offer } else { nil } }.last)
            pass(50)
            recipient.send(.fileAccept(id: offered.id, offset: 0))
            scheduler.run()
            XCTAssertEqual(server.relayedTransferCount, 1, "cycle \(cycle)")
            if cycle == 0 {
                // The answer does not restart the minute.
                pass(10)
                XCTAssertEqual(server.relayedTransferCount, 0, "ended a minute after the offer")
                XCTAssertTrue(sender.messages.contains(.fileResult(id: 1, status: .refused, message: "hog sent less than 1048576 bytes in 60 s; send it again to resume")),
                              "\(sender.messages.suffix(3))")
            } else {
                // An end with no data ends it at once.
                sender.send(.fileEnd(id: 1, digest: nil))
                scheduler.run()
                XCTAssertEqual(server.relayedTransferCount, 0, "cycle \(cycle)")
                XCTAssertTrue(recipient.messages.contains(.fileCancel(id: offered.id, reason: "the sender ended the file after 0 of its 10485760 bytes")))
            }
        }
    }

    func testAnOfferFromAnotherHostTakesThePlaceOfTheLeastProgressFromTheHostHoldingTheMost() throws {
        // Attack F1: two hosts hold all 32 of the room's places with offers that bring nothing.
        let recipients = (0..<16).map { rawMember("sink\($0)", host: 6) }
        let hogs = (0..<8).map { rawMember("hog\($0)", host: $0 < 4 ? 4 : 5) }
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), host: 9)
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil, host: 7)
        scheduler.run()
        for (index, hog) in hogs.enumerated() {
            for id in 1...4 as ClosedRange<UInt32> {
                hog.send(.fileOfferTo(offer(id, name: "hog\(index)-\(id)"), to: "sink\(2 * index + Int(id - 1) / 2)"))
            }
        }
        scheduler.run()
        XCTAssertEqual(server.relayedTransferCount, 32)
        XCTAssertEqual(recipients.map { $0.messages.count { if case .fileOfferFrom = $0 { true } else { false } } }, Array(repeating: 2, count: 16))
        // Carol, on a third host, gets a place: the newest of host 5's offers gives way.
        let source = directory.write(Array(content.prefix(5000)), to: "note.txt")
        carol.send(source, to: "bob")
        scheduler.run()
        XCTAssertNoThrow(try XCTUnwrap(carol.results.first).get(), "\(carol.failure)")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/note.txt"), Array(content.prefix(5000)))
        let gaveWay = hogs.flatMap { hog in hog.messages.compactMap { if case .fileResult(_, .refused, let text) = $0 { text } else { nil } } }
        XCTAssertEqual(gaveWay, ["the room is relaying 32 files, most of them from your host; its place went to a file from another host; send it again to resume"])
        XCTAssertTrue(hogs[7].messages.contains { if case .fileResult(4, .refused, _) = $0 { true } else { false } }, "the newest offer of the host holding the most")
        XCTAssertEqual(server.relayedTransferCount, 31)
        // Host 5 fills the room again; a newcomer on host 8 takes a place again...
        hogs[7].send(.fileOfferTo(offer(5, name: "again"), to: "sink0"))
        scheduler.run()
        XCTAssertEqual(server.relayedTransferCount, 32)
        let eve = rawMember("eve", host: 8)
        scheduler.run()
        eve.send(.fileOfferTo(offer(1, name: "eve"), to: "sink15"))
        scheduler.run()
        XCTAssertFalse(eve.messages.contains { if case .fileResult = $0 { true } else { false } }, "\(eve.messages)")
        XCTAssertTrue(hogs[7].messages.contains { if case .fileResult(5, .refused, _) = $0 { true } else { false } })
        // ...but host 5, holding one fewer than host 4, may not take a place back.
        hogs[7].send(.fileOfferTo(offer(6, name: "more"), to: "sink1"))
        scheduler.run()
        XCTAssertTrue(hogs[7].messages.contains(.fileResult(id: 6, status: .refused, message: "the room is relaying 32 files already; try again later")),
                      "\(hogs[7].messages.suffix(3))")
        XCTAssertEqual(server.relayedTransferCount, 32)
        withExtendedLifetime(bob) {} // bob stays in the room, a member who can receive, to the end
    }

    func testAPlaceThatMovesNoDataForTenSecondsGoesToANewcomerWhateverItsHostHolds() throws {
        // Second review: one machine with 32 link-local addresses (32 hosts to the server)
        // holds every place, one each, re-offering each time one is ended.
        let recipients = (0..<16).map { rawMember("sink\($0)", host: 6) }
        let hogs = (0..<32).map { rawMember("hog\($0)", host: UInt8(100 + $0)) }
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), host: 9)
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil, host: 7)
        scheduler.run()
        for (index, hog) in hogs.enumerated() { hog.send(.fileOfferTo(offer(1, name: "hog\(index)"), to: "sink\(index / 2)")) }
        scheduler.run()
        XCTAssertEqual(server.relayedTransferCount, 32)
        XCTAssertEqual(recipients.count, 16)
        // At once, no place may go: every host holds one.
        let source = directory.write(Array(content.prefix(5000)), to: "note.txt")
        carol.send(source, to: "bob")
        scheduler.run()
        XCTAssertTrue(carol.failure.hasSuffix("note.txt: the room is relaying 32 files already; try again later"), carol.failure)
        // Once they have moved no data for 10 s, one gives way to carol's next try.
        scheduler.advance(by: .seconds(10))
        carol.send(source, to: "bob")
        scheduler.run()
        XCTAssertEqual(carol.results.count, 2)
        XCTAssertNoThrow(try carol.results[1].get())
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/note.txt"), Array(content.prefix(5000)))
        let gaveWay = hogs.flatMap { hog in hog.messages.compactMap { if case .fileResult(_, .refused, let text) = $0 { text } else { nil } } }
        XCTAssertEqual(gaveWay, ["the room is relaying 32 files, and this one moved no data for 10 s; its place went to a file from another host; send it again to resume"])
        withExtendedLifetime(bob) {}
    }

    func testOnlyItsSenderLearnsThatAFileIsStoredAlready() throws {
        let file = Array(content.prefix(5000))
        let source = directory.write(file, to: "secret-plans.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        let mallory = rawMember("mallory")
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()
        XCTAssertEqual(try XCTUnwrap(alice.results.first).get().bytesTransferred, 5000)
        // Mallory knows the digest and size, not the content: she is asked for the data.
        let hash = SHA256()
        hash.update(file)
        let digest = hash.finish()
        mallory.send(.fileOfferTo(.init(id: 1, size: 5000, digest: digest, name: "guess"), to: "bob"))
        scheduler.run()
        XCTAssertFalse(mallory.messages.contains { if case .fileResult(1, .stored, _) = $0 { true } else { false } }, "\(mallory.messages)")
        XCTAssertTrue(mallory.messages.contains(.fileAccept(id: 1, offset: 0)))
        XCTAssertFalse(bob.events.contains { if case .relayed("mallory", .stored) = $0 { true } else { false } })
        mallory.send(.fileCancel(id: 1, reason: "never mind"))
        // Alice, sending it again, is told it is there.
        alice.send(source, to: "bob")
        scheduler.run()
        let again = try XCTUnwrap(alice.results.last).get()
        XCTAssertEqual(again.bytesTransferred, 0)
        XCTAssertEqual(again.storedAs, "secret-plans.txt")
        XCTAssertEqual(TemporaryDirectory.names(in: directory.path + "/bob").filter { !$0.hasPrefix(".") }, ["secret-plans.txt"])
    }

    func testAnotherHostTakingTheSendersNameCannotSeeOrTouchItsPartialData() throws {
        let file = Array(content.prefix(100))
        let hash = SHA256()
        hash.update(file)
        let offer = Message.FileOffer(id: 1, size: 100, digest: hash.finish(), name: "plans.txt")
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        let alice = rawMember("alice", host: 2)
        scheduler.run()
        alice.send(.fileOfferTo(offer, to: "bob"))
        scheduler.run()
        alice.send(.fileChunk(id: 1, data: ArraySlice(file.prefix(40))))
        scheduler.run()
        alice.stream.close()
        scheduler.run()
        // Mallory, on another host, takes the name: she is asked for everything, and her wrong
        // bytes touch only data of her own.
        let mallory = rawMember("alice", host: 3)
        scheduler.run()
        mallory.send(.fileOfferTo(offer, to: "bob"))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileAccept(id: 1, offset: 0)), "\(mallory.messages)")
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 0, count: 100)))
        mallory.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains { if case .fileResult(1, .checksumMismatch, _) = $0 { true } else { false } }, "\(mallory.messages)")
        mallory.stream.close()
        scheduler.run()
        // Alice, back from her host, resumes where she was.
        let back = rawMember("alice", host: 2)
        scheduler.run()
        back.send(.fileOfferTo(offer, to: "bob"))
        scheduler.run()
        XCTAssertTrue(back.messages.contains(.fileAccept(id: 1, offset: 40)), "\(back.messages)")
        back.send(.fileChunk(id: 1, data: ArraySlice(file.dropFirst(40))))
        back.send(.fileEnd(id: 1, digest: nil))
        scheduler.run()
        XCTAssertTrue(back.messages.contains(.fileResult(id: 1, status: .stored, message: "plans.txt")), "\(back.messages)")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/plans.txt"), file)
        withExtendedLifetime(bob) {} // bob stays in the room, a member who can receive, to the end
    }

    func testAFileToTheRoomsOwnNameGoesToItsInbox() throws {
        let source = directory.write(Array(content.prefix(1000)), to: "note.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        scheduler.run()
        alice.send(source, to: "living ROOM")
        scheduler.run()
        XCTAssertEqual(try XCTUnwrap(alice.results.first).get().storedAs, "note.txt")
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/server/note.txt"), Array(content.prefix(1000)))
    }

    func testOffersToNobodyToOneselfAndToAMemberWithoutAnInboxAreRefusedClearly() throws {
        let source = directory.write(Array(content.prefix(1000)), to: "note.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: try inbox("alice"))
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil)
        scheduler.run()
        alice.send(source, to: "nobody")
        alice.send(source, to: "alice")
        alice.send(source, to: "carol")
        scheduler.run()

        let reasons = alice.results.map { result -> String in
            if case .failure(let error) = result { error.message } else { "stored" }
        }
        XCTAssertEqual(reasons.count, 3)
        XCTAssertTrue(reasons[0].contains("nobody called 'nobody' is in the room"), reasons[0])
        XCTAssertTrue(reasons[1].contains("cannot send a file to yourself"), reasons[1])
        XCTAssertTrue(reasons[2].contains("without --inbox"), reasons[2])
        let told = try XCTUnwrap(carol.receiveFailures.first)
        XCTAssertEqual(told.from, "alice")
        XCTAssertTrue(told.reason.contains("--inbox DIR"), told.reason)
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertEqual(alice.errors + carol.errors, [])
    }

    func testARecipientThatLeavesEndsTheTransferForTheSenderAndTheDataIsKeptForResuming() throws {
        let source = directory.write(content, to: "big.bin")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        var bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        alice.send(source, to: "bob")
        runUntilData(reaches: bob) // part of the data crosses, then bob's connection breaks
        bob.stream.close()
        scheduler.run()
        XCTAssertTrue(alice.failure.contains("bob left the room"), alice.failure)
        XCTAssertEqual(server.relayedTransferCount, 0)
        let partials = TemporaryDirectory.names(in: directory.path + "/bob/.partial")
        XCTAssertEqual(partials.count, 1)
        let kept = TemporaryDirectory.read(directory.path + "/bob/.partial/" + (partials.first ?? "")) ?? []
        XCTAssertGreaterThan(kept.count, 0)
        XCTAssertLessThan(kept.count, content.count)

        // bob comes back; alice sends again: only the rest crosses.
        bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        alice.results = []
        alice.send(source, to: "bob")
        scheduler.run()
        let sent = try XCTUnwrap(alice.results.first).get()
        XCTAssertEqual(sent.startOffset, UInt64(kept.count))
        XCTAssertEqual(TemporaryDirectory.read(directory.path + "/bob/big.bin"), content)
    }

    func testASenderThatVanishesEndsTheTransferForTheRecipient() throws {
        let source = directory.write(content, to: "big.bin")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        alice.send(source, to: "bob")
        runUntilData(reaches: bob)
        alice.stream.close()
        scheduler.run()
        let told = try XCTUnwrap(bob.receiveFailures.first)
        XCTAssertEqual(told.from, "alice")
        XCTAssertTrue(told.reason.contains("alice left the room") && told.reason.contains("resumes"), told.reason)
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertEqual(bob.errors, [])
        XCTAssertEqual(bob.files.incoming.count, 0)
    }

    func testARecipientThatNeverAnswersIsGivenUpOnAndTold() throws {
        let source = directory.write(Array(content.prefix(1000)), to: "note.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let mute = rawMember("mute")
        scheduler.run()
        alice.send(source, to: "mute")
        scheduler.run()
        guard let offered = offer(to: mute, from: "alice") else {
            return XCTFail("\(mute.messages)")
        }
        XCTAssertGreaterThanOrEqual(offered.id, 1 << 31, "relayed ids are the server's, from the upper half")
        mute.send(.pong(token: 0)) // a sign of life; it keeps answering nothing about the file
        scheduler.advance(by: .seconds(61))
        XCTAssertTrue(alice.failure.contains("mute did not answer the offer within 60 s"), alice.failure)
        XCTAssertTrue(mute.messages.contains(.fileCancel(id: offered.id, reason: "mute did not answer the offer within 60 s")), "\(mute.messages.suffix(3))")
        XCTAssertEqual(server.relayedTransferCount, 0)
    }

    func testIdsAreMappedPerConnectionAndAcceptingTwiceIsTheRecipientsOwnError() throws {
        let data = Array(content.prefix(5000))
        let source = directory.write(data, to: "note.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let bob = rawMember("bob")
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()
        guard let offer = offer(to: bob, from: "alice") else {
            return XCTFail("\(bob.messages)")
        }
        XCTAssertEqual(offer.size, 5000)
        XCTAssertEqual(offer.name, "note.txt")
        bob.send(.fileAccept(id: offer.id, offset: 0))
        bob.send(.fileAccept(id: offer.id, offset: 0))
        scheduler.run()
        XCTAssertEqual(bob.messages.count { if case .error(ProtocolError.Code.fileProtocol.rawValue, _) = $0 { true } else { false } }, 1)
        let chunks = bob.messages.compactMap { if case .fileChunk(offer.id, let bytes) = $0 { bytes } else { nil } }
        XCTAssertEqual(chunks.joined().map { $0 }, data, "alice's data arrives under bob's id")
        XCTAssertTrue(bob.messages.contains(.fileEnd(id: offer.id, digest: nil)))
        bob.send(.fileResult(id: offer.id, status: .stored, message: "note.txt"))
        scheduler.run()
        XCTAssertEqual(try XCTUnwrap(alice.results.first).get().storedAs, "note.txt")
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertEqual(alice.errors, [])
    }

    func testAMemberCannotTouchAnotherMembersTransferAndOffersAreBounded() throws {
        let mallory = rawMember("mallory")
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"))
        scheduler.run()
        // A thousand offers to bob: two reach him (one sender's share of his places), the
        // rest are refused at the server.
        let digest = [UInt8](repeating: 7, count: 32)
        for id in 1...1000 as ClosedRange<UInt32> {
            mallory.send(.fileOfferTo(.init(id: id, size: 10, digest: [UInt8(id & 0xFF), UInt8(id >> 8)] + digest.dropFirst(2), name: "x\(id)"), to: "bob"))
        }
        scheduler.run()
        XCTAssertEqual(bob.files.incoming.count, 2)
        XCTAssertEqual(server.relayedTransferCount, 2)
        let refused = mallory.messages.filter { if case .fileResult(_, .refused, _) = $0 { true } else { false } }
        XCTAssertEqual(refused.count, 998)
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 3, status: .refused, message: "members on your host are sending 2 files to bob at once already; wait for one to finish")))
        // Ids are per connection: chunks for bob's side of the ids, or for ids mallory never
        // offered, are mallory's own protocol errors and reach nobody.
        let bobIDs = Array(bob.files.incoming.keys)
        for id in bobIDs { mallory.send(.fileChunk(id: id, data: [1, 2, 3])) }
        mallory.send(.fileAccept(id: bobIDs[0], offset: 0))
        mallory.send(.fileOfferFrom(.init(id: 5000, size: 1, digest: digest, name: "forged"), from: "bob", host: 1))
        scheduler.run()
        let errors = mallory.messages.filter { if case .error(ProtocolError.Code.fileProtocol.rawValue, _) = $0 { true } else { false } }
        XCTAssertEqual(errors.count, bobIDs.count + 2)
        XCTAssertEqual(bob.errors, [])
        // Bob accepted at once; more data than offered ends that transfer on both sides.
        XCTAssertEqual(mallory.messages.count { if case .fileAccept = $0 { true } else { false } }, 2)
        let first = try XCTUnwrap(bob.files.incoming.values.min { $0.offer.id < $1.offer.id })
        mallory.send(.fileChunk(id: 1, data: ArraySlice(repeating: 1, count: 11)))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 1, status: .refused, message: "more data than the 10 bytes offered")))
        XCTAssertNil(bob.files.incoming[first.offer.id])
        XCTAssertEqual(server.relayedTransferCount, 1)
        // One id, one transfer: an id in use for a file to the server is not relayed as well.
        mallory.send(.fileOffer(.init(id: 5001, size: 10, digest: [UInt8](repeating: 9, count: 32), name: "to-server")))
        mallory.send(.fileOfferTo(.init(id: 5001, size: 10, digest: [UInt8](repeating: 8, count: 32), name: "to-bob"), to: "bob"))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 5001, status: .refused, message: "transfer id 5001 is already in use")))
        mallory.send(.fileOfferTo(.init(id: 0, size: 10, digest: [UInt8](repeating: 6, count: 32), name: "zero"), to: "bob"))
        scheduler.run()
        XCTAssertTrue(mallory.messages.contains(.fileResult(id: 0, status: .refused, message: "transfer id 0 is not valid: a sender numbers its transfers from 1")))
        XCTAssertEqual(server.relayedTransferCount, 1)
        // ... nor for one to the room's inbox (or, the same code, to svc-connect's).
        mallory.send(.fileOffer(.init(id: 0, size: 10, digest: [UInt8](repeating: 5, count: 32), name: "zero")))
        scheduler.run()
        XCTAssertEqual(mallory.messages.count(where: { $0 == .fileResult(id: 0, status: .refused, message: "transfer id 0 is not valid: a sender numbers its transfers from 1") }), 2)
        // Mallory leaves: bob's transfers from her end, nothing is left.
        mallory.stream.close()
        scheduler.run()
        XCTAssertEqual(bob.files.incoming.count, 0)
        XCTAssertEqual(bob.receiveFailures.filter { $0.reason.contains("mallory left the room") }.count, 1)
        XCTAssertEqual(server.relayedTransferCount, 0)
    }

    func testAThousandOffersRefusedByTheRecipientLeaveNoStateOrTimersBehind() throws {
        let mallory = rawMember("mallory")
        let carol = Member("carol", server: server, scheduler: scheduler, inbox: nil)
        scheduler.run()
        let timers = scheduler.pendingTimerCount
        for id in 1...1000 as ClosedRange<UInt32> {
            mallory.send(.fileOfferTo(.init(id: id, size: 10, digest: [UInt8](repeating: 1, count: 32), name: "x"), to: "carol"))
        }
        scheduler.run()
        XCTAssertEqual(mallory.messages.count { if case .fileResult(_, .refused, _) = $0 { true } else { false } }, 1000)
        XCTAssertEqual(server.relayedTransferCount, 0)
        XCTAssertLessThanOrEqual(scheduler.pendingTimerCount, timers + 2, "no watchdog outlives its transfer")
        XCTAssertEqual(carol.errors, [])
    }

    func testAnOldMemberIsNotOfferedRelayedFiles() throws {
        let source = directory.write(Array(content.prefix(10)), to: "a.txt")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil)
        let old = Member("old", server: server, scheduler: scheduler, inbox: try inbox("old"), capabilities: [.rooms, .files, .resume])
        scheduler.run()
        alice.send(source, to: "old")
        scheduler.run()
        XCTAssertTrue(alice.failure.contains("too old"), alice.failure)
        XCTAssertTrue(old.events.isEmpty)
    }
}
