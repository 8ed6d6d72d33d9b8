@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// Data received but not yet written still counts as promised (attacks15f, F3): free space
/// falls only as it is written, so counting it as done on arrival let many senders' disk
/// backlogs be admitted past the free space.
extension FileTransfersStreamedTests {
    func testDataWaitingForTheDiskStillCountsAsPromisedUntilItIsWritten() throws {
        let mebibyte = 1 << 20
        let probe = try Inbox(directory: directory.path + "/probe")
        let free = try XCTUnwrap(probe.freeBytes())
        let pool = 64 * mebibyte
        try XCTSkipIf(free < UInt64(pool) * 4, "needs 256 MiB free in \(directory.path)")
        var limits = Inbox.Limits()
        limits.diskReserve = free - UInt64(pool) // 64 MiB usable; other writers may move it by a little
        let inbox = try Inbox(directory: directory.path + "/tight", limits: limits)

        let stuckDisk = ManualScheduler()
        let (peer, _) = rawSender(into: inbox, disk: stuckDisk)

        let first = 40 * mebibyte
        offer(peer, size: first, id: 1, name: "first.bin")
        for _ in 0..<12 { // a chunk at a time, as the in-memory stream takes them
            XCTAssertTrue(peer.send(.fileChunk(id: 1, data: ArraySlice(repeating: 7, count: 512 << 10))))
            scheduler.run()
        }
        XCTAssertGreaterThan(stuckDisk.pendingJobCount, 0, "the chunks wait for the disk")
        // 40 MiB are still to be written: 27 more do not fit in 64 (arrival alone would have
        // left 34 promised, and 27 would have fitted).
        offer(peer, size: 27 * mebibyte, id: 2, name: "second.bin")
        let refused = results(peer).filter { $0.0 == .refused }.map(\.1)
        XCTAssertTrue(refused.contains { $0.hasPrefix("not enough space in the inbox") }, "\(results(peer))")

        while stuckDisk.run() > 0 || scheduler.run() > 0 {}
        // Written: 34 MiB still promised, 58 usable; 20 more fit.
        offer(peer, size: 20 * mebibyte, id: 3, name: "third.bin")
        XCTAssertEqual(results(peer).filter { $0.0 == .refused }.count, 1, "\(results(peer))")
        XCTAssertTrue(peer.messages.contains { if case .fileAccept(3, _) = $0 { true } else { false } }, "\(peer.messages)")
    }
}
