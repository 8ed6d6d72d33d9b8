import Foundation
@testable import Messaging
import XCTest

/// The space one member and one host may hold in an inbox (attacks15y finding 2): others count
/// at most their share, a sender alone may still take nearly all the space, and one beyond its
/// share is ended when the space it was not promised is gone.
final class InboxSharesTests: XCTestCase {
    static let mebibyte: UInt64 = 1 << 20

    func key(_ number: UInt8, member: String, host: String, size: UInt64 = 10) -> PartialKey {
        PartialKey(digest: [UInt8](repeating: number, count: 32), size: size, sender: member, host: host)
    }

    func promises(_ holdings: [(PartialKey, UInt64)], pool: UInt64) -> Promises {
        var promises = Promises()
        promises.pool = pool
        for (key, bytes) in holdings { promises.remaining[key] = bytes }
        return promises
    }

    func testAMemberAloneMayBePromisedNearlyAllTheSpaceButNotMoreThanIsFree() {
        let none = Promises()
        XCTAssertTrue(none.fits(990, for: "a", pool: 1000).fits)
        XCTAssertTrue(none.fits(1000, for: "a", pool: 1000).fits)
        XCTAssertFalse(none.fits(1001, for: "a", pool: 1000).fits)
    }

    func testWhatAnotherMemberHoldsCountsAtMostAQuarterOfTheSpace() {
        let hog = promises([(key(1, member: "hog", host: "h"), 990)], pool: 1000)
        let (fits, promised) = hog.fits(750, for: "honest", pool: 1000)
        XCTAssertTrue(fits, "the hog counts for 250")
        XCTAssertEqual(promised, 250)
        XCTAssertFalse(hog.fits(751, for: "honest", pool: 1000).fits)
        XCTAssertEqual(hog.fits(10, for: "honest", pool: 1000).promised, 250)
    }

    func testAMembersOwnTransfersCountInFull() {
        let one = promises([(key(1, member: "a", host: "h"), 600)], pool: 1000)
        XCTAssertFalse(one.fits(500, for: "a", pool: 1000).fits, "600 + 500 is more than is free")
        XCTAssertTrue(one.fits(400, for: "a", pool: 1000).fits)
    }

    func testTheMembersOfOneHostTogetherCountAtMostHalf() {
        let host = promises([(key(1, member: "a1", host: "h"), 400), (key(2, member: "a2", host: "h"), 400),
                             (key(3, member: "a3", host: "h"), 400)], pool: 1000)
        XCTAssertEqual(host.held(byOthersThan: "b", pool: 1000), 500, "three quarters, capped at a half")
        XCTAssertTrue(host.fits(500, for: "b", pool: 1000).fits, "another host still gets half")
        XCTAssertFalse(host.fits(501, for: "b", pool: 1000).fits)
        XCTAssertEqual(host.held(byOthersThan: "a1", pool: 1000), 500, "a member of the host sees the others capped too")
    }

    func testOnlyASenderBeyondItsShareIsCheckedAsDataComes() {
        let hog = key(1, member: "hog", host: "h")
        let honest = key(2, member: "honest", host: "g")
        let both = promises([(hog, 990), (honest, 200)], pool: 1000)
        XCTAssertTrue(both.isBeyondShare(hog))
        XCTAssertFalse(both.isBeyondShare(honest), "200 is within a quarter")
        XCTAssertFalse(both.fits(0, for: "hog", pool: 1000).fits, "990 no longer fits beside the honest member's 200")
        XCTAssertTrue(both.fits(0, for: "honest", pool: 1000).fits)
    }

    func testNoArithmeticOverflows() {
        let huge = promises([(key(1, member: "a", host: "h"), .max), (key(2, member: "b", host: "h"), .max)], pool: .max)
        XCTAssertFalse(huge.fits(.max, for: "c", pool: .max).fits)
        XCTAssertFalse(huge.fits(1, for: "a", pool: .max).fits)
        XCTAssertEqual(huge.held(byOthersThan: "c", pool: .max), UInt64.max / 4 * 2, "two quarters, within the half")
    }

    // MARK: Through a real inbox

    func testAHogThatOfferedAllTheSpaceLetsAnotherMemberInAndIsThenEndedWhenItsSpaceIsGone() throws {
        let directory = NSTemporaryDirectory() + "svc-inbox-shares-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let free = try XCTUnwrap(try Inbox(directory: directory).freeBytes())
        try XCTSkipIf(free < 2 << 30, "needs 2 GiB free in \(directory)")
        var limits = Inbox.Limits()
        limits.diskReserve = free - 400 * Self.mebibyte // 400 MiB usable; other writers may move it by a little
        let inbox = try Inbox(directory: directory, limits: limits)
        func admit(_ key: PartialKey, _ size: UInt64) -> String? {
            switch inbox.admit(key, size: size, memberTransfers: 0) {
            case .success(let admission): close(admission.fd); return nil
            case .failure(let refusal): return refusal.detail ?? refusal.message
            }
        }
        let hogSize = 380 * Self.mebibyte
        let hog = key(1, member: "key hog", host: "10.0.0.2", size: hogSize)
        XCTAssertNil(admit(hog, hogSize), "alone, it may take nearly all the space")
        let again = try XCTUnwrap(admit(key(2, member: "key hog", host: "10.0.0.2", size: 100 * Self.mebibyte), 100 * Self.mebibyte),
                                  "its own promise counts in full")
        XCTAssertTrue(again.hasPrefix("not enough space in the inbox: 104857600 bytes needed"), again)
        XCTAssertTrue(again.contains("count up to their share"), again)
        let honestSize = 200 * Self.mebibyte
        let honest = key(3, member: "key honest", host: "10.0.0.3", size: honestSize)
        XCTAssertNil(admit(honest, honestSize), "the hog counts for a quarter: another member gets in")
        XCTAssertTrue(inbox.consumed(Self.mebibyte, by: honest), "the honest member's space was set aside")
        XCTAssertFalse(inbox.consumed(1, by: hog), "what the hog still needs no longer fits: it is ended")
        inbox.release(hog)
        inbox.release(honest)
        XCTAssertNil(admit(key(4, member: "key other", host: "10.0.0.4", size: hogSize), hogSize), "all of it is free again")
    }
}
