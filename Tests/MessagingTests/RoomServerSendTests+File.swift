import Dispatch
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// svc-publish's `/send NAME FILE` to a member that accepts the file, keeps pinging and never
/// reads it: once the member's outbox has taken nothing for the answer timeout (60 s), the
/// room drops the member with why, and reports the file not delivered.
extension RoomServerSendTests {
    func testAMemberThatAcceptsAFileAndNeverReadsItIsDroppedWithWhy() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.write([UInt8](repeating: 0x5A, count: 3 << 20), to: "big.bin")
        var options = RoomServer.Options(name: "host")
        options.slowMemberTimeout = .seconds(30)
        let room = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler)
        let events = Locked<[RoomServer.Event]>([])
        Task { for await event in room.events { events.withLock { $0.append(event) } } }
        let bob = try await join(room, as: "bob", port: 1)
        try await value(of: Task { try await room.send(.send(to: "bob", path: path)) }, "the /send")
        try await pump("the offer") { bob.messages.contains { if case .fileOffer = $0 { true } else { false } } }
        let id = try XCTUnwrap(queue.sync { bob.messages.lazy.compactMap { if case .fileOffer(let offer) = $0 { offer.id } else { nil } }.first })
        queue.sync {
            bob.stream.pauseReading()
            bob.send(.fileAccept(id: id, offset: 0))
        }
        try await settle()
        // Bob pings every 5 s, so the heartbeat is content; he reads nothing.
        func wait(_ duration: Duration) async throws {
            var left = duration
            while left > .zero {
                queue.sync {
                    bob.send(.ping(token: 1))
                    scheduler.advance(by: .seconds(5))
                }
                try await settle()
                left -= .seconds(5)
            }
        }
        try await wait(.seconds(55))
        XCTAssertTrue(events.withLock { $0 }.allSatisfy { if case .left = $0 { false } else { true } }, "bob still had time")
        try await wait(.seconds(10))
        let seen = events.withLock { $0 }
        let left = seen.compactMap { if case .left(_, "bob", let reason) = $0 { reason } else { nil } }
        XCTAssertEqual(left, ["too-slow: you read nothing of the file data sent to you for 60 s (big.bin: \(2 * FileTransfers.chunkSize) of its \(3 << 20) bytes queued); "
                              + "the connection is closed: read faster, or rejoin"], "\(seen)")
        let failures = seen.compactMap { if case .fileSent("bob", .failure(let error)) = $0 { error.message } else { nil } }
        XCTAssertEqual(failures.count, 1, "\(seen)")
        XCTAssertTrue(failures.first?.hasPrefix("\(path) was not delivered: the other end read nothing of the data waiting to be sent for 60 s") == true, "\(failures)")
    }
}
