import Foundation
import Glibc
@testable import Messaging
import XCTest

/// The inbox on real temporary directories: what it refuses to open, links it never follows,
/// and every bound it keeps (README.md, "Files: bounds").
final class InboxTests: XCTestCase {
    var directory = ""
    var inboxPath: String { directory + "/inbox" }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "svc-inbox-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func key(_ byte: UInt8, size: UInt64 = 10, sender: String = "10.0.0.2") -> PartialKey {
        PartialKey(digest: [UInt8](repeating: byte, count: 32), size: size, sender: sender)
    }

    func partialNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: inboxPath + "/.partial")) ?? []).sorted()
    }

    /// Writes `bytes` bytes to `.partial/<name>`, last modified `age` seconds ago.
    func plantPartial(_ name: String, bytes: Int = 1, age: Int) throws {
        let path = inboxPath + "/.partial/" + name
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
        var times = [timespec(tv_sec: time(nil) - age, tv_nsec: 0), timespec(tv_sec: time(nil) - age, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
    }

    func admit(_ inbox: Inbox, _ key: PartialKey, size: UInt64 = 10, member: Int = 0) -> Result<Inbox.Admission, Inbox.Refusal> {
        let result = inbox.admit(key, size: size, memberTransfers: member)
        if case .success(let admission) = result { close(admission.fd) }
        return result
    }

    /// What the inbox's owner is told of a refusal (the sender may be told less).
    func refusal(_ result: Result<Inbox.Admission, Inbox.Refusal>) -> String? {
        if case .failure(let refusal) = result { return refusal.detail ?? refusal.message }
        return nil
    }

    func mode(_ path: String) throws -> Int {
        try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int)
    }

    // MARK: Opening

    func testCreatesAPrivatePartialDirectory() throws {
        _ = try Inbox(directory: inboxPath)
        XCTAssertEqual(try mode(inboxPath + "/.partial"), 0o700)
    }

    func testRefusesDirectoriesOtherUsersCanWrite() throws {
        try FileManager.default.createDirectory(atPath: inboxPath, withIntermediateDirectories: true)
        chmod(inboxPath, 0o777)
        XCTAssertThrowsError(try Inbox(directory: inboxPath)) { error in
            XCTAssertTrue("\(error)".contains("other users can write to it (mode 777); run 'chmod go-w \(inboxPath)'"), "\(error)")
        }
        chmod(inboxPath, 0o755)
        try FileManager.default.createDirectory(atPath: inboxPath + "/.partial", withIntermediateDirectories: true)
        chmod(inboxPath + "/.partial", 0o775)
        XCTAssertThrowsError(try Inbox(directory: inboxPath)) { error in
            XCTAssertTrue("\(error)".contains("run 'chmod go-w \(inboxPath)/.partial'"), "\(error)")
        }
        chmod(inboxPath + "/.partial", 0o700)
        XCTAssertNoThrow(try Inbox(directory: inboxPath))
    }

    func testRefusesDirectoriesOwnedBySomeoneElse() throws {
        try FileManager.default.createDirectory(atPath: inboxPath, withIntermediateDirectories: true)
        XCTAssertEqual(chown(inboxPath, 65534, 65534), 0, "the tests run as root")
        XCTAssertThrowsError(try Inbox(directory: inboxPath)) { error in
            XCTAssertTrue("\(error)".contains("it belongs to user id 65534"), "\(error)")
        }
    }

    func testRefusesAnInboxThatIsASymbolicLink() throws {
        let real = directory + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: inboxPath, withDestinationPath: real)
        XCTAssertThrowsError(try Inbox(directory: inboxPath)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        // A .partial that is a link is refused too.
        try FileManager.default.createSymbolicLink(atPath: real + "/.partial", withDestinationPath: directory)
        XCTAssertThrowsError(try Inbox(directory: real)) { error in
            XCTAssertTrue("\(error)".contains(".partial: it is a symbolic link"), "\(error)")
        }
    }

    // MARK: Links planted in the inbox

    func testALinkPlantedInPartialIsRemovedNotFollowed() throws {
        let inbox = try Inbox(directory: inboxPath)
        let victim = directory + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let planted = key(1)
        try FileManager.default.createSymbolicLink(atPath: inboxPath + "/.partial/" + planted.name, withDestinationPath: victim)
        let admission = try inbox.admit(planted, size: 10, memberTransfers: 0).get()
        XCTAssertEqual(pwrite(admission.fd, "overwritten", 10, 0), 10)
        close(admission.fd)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        let type = try FileManager.default.attributesOfItem(atPath: inboxPath + "/.partial/" + planted.name)[.type] as? FileAttributeType
        XCTAssertEqual(type, .typeRegular)
    }

    func testStoringNeverWritesThroughALinkWithTheSameName() throws {
        let inbox = try Inbox(directory: inboxPath)
        let victim = directory + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: inboxPath + "/report.txt", withDestinationPath: victim)
        let file = key(2)
        let admission = try inbox.admit(file, size: 5, memberTransfers: 0).get()
        XCTAssertEqual(pwrite(admission.fd, "hello", 5, 0), 5)
        close(admission.fd)
        XCTAssertEqual(try inbox.store(file, offeredName: "../report.txt"), "report (2).txt")
        XCTAssertEqual(try String(contentsOfFile: inboxPath + "/report (2).txt", encoding: .utf8), "hello")
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        XCTAssertEqual(partialNames(), [], "the partial data became the stored file")
    }

    // MARK: Bounds

    func testTransfersAreBoundedPerMemberAndPerInbox() throws {
        var limits = Inbox.Limits()
        limits.transfersPerMember = 2
        limits.transfers = 3
        let inbox = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertEqual(refusal(admit(inbox, key(1), member: 2)),
                       "at most 2 files may arrive from one member at a time; send this one when the others are done")
        for byte in UInt8(1)...3 { XCTAssertNil(refusal(admit(inbox, key(byte), member: 1))) }
        XCTAssertEqual(refusal(admit(inbox, key(4))), "the inbox is receiving 3 files already (its limit); send this one later")
        XCTAssertEqual(inbox.activeTransfers, 3)
        inbox.release(key(3))
        XCTAssertEqual(refusal(admit(inbox, key(1))), "the same file is already arriving from this address; send it again when that transfer ended")
        XCTAssertNil(refusal(admit(inbox, key(4))))
    }

    func testOffersMayNotTogetherPromiseMoreSpaceThanIsFree() throws {
        let free = try XCTUnwrap(try Inbox(directory: inboxPath).freeBytes())
        try XCTSkipIf(free < 24 << 30, "needs 24 GiB free in \(directory)")
        var limits = Inbox.Limits()
        limits.diskReserve = free - (10 << 30) // 10 GiB usable; other writers may move it by a little
        let inbox = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertNil(refusal(admit(inbox, key(1, size: 6 << 30), size: 6 << 30)), "6 GiB fit")
        let second = try XCTUnwrap(refusal(admit(inbox, key(2, size: 6 << 30), size: 6 << 30)), "6 more do not: 6 are promised")
        XCTAssertTrue(second.hasPrefix("not enough space in the inbox: 6442450944 bytes needed"), second)
        XCTAssertTrue(second.contains("6442450944 are promised to transfers under way"), second)
        guard case .failure(let told) = admit(inbox, key(2, size: 6 << 30), size: 6 << 30) else { return XCTFail("admitted") }
        XCTAssertEqual(told.message, "not enough space in the inbox for 6442450944 more bytes; try again later",
                       "the sender learns nothing of the free space")
        XCTAssertEqual(partialNames(), [key(1, size: 6 << 30).name], "the refused offer left no file")
        XCTAssertTrue(inbox.consumed(4 << 30, by: key(1, size: 6 << 30)), "one member alone: all it needs still fits")
        XCTAssertNil(refusal(admit(inbox, key(2, size: 6 << 30), size: 6 << 30)), "only 2 GiB are still promised")
        inbox.release(key(1, size: 6 << 30))
        inbox.release(key(2, size: 6 << 30))
        XCTAssertNotNil(refusal(admit(inbox, key(3, size: free), size: free)), "the reserve stays free")
        XCTAssertNotNil(refusal(admit(inbox, key(4, size: .max), size: .max)), "no arithmetic overflows")
    }

    func testEmptyFilesAreRefusedOnceFreeInodesReachTheReserve() throws {
        let free = try XCTUnwrap(try Inbox(directory: inboxPath).freeInodes(), "this file system counts inodes")
        var limits = Inbox.Limits()
        limits.inodeReserve = free + 1_000 // already under it
        let inbox = try Inbox(directory: inboxPath, limits: limits)
        let message = try XCTUnwrap(refusal(admit(inbox, key(1, size: 0), size: 0)), "an empty file still takes an inode")
        XCTAssertTrue(message.contains("free inodes, fewer than the"), message)
        XCTAssertEqual(partialNames(), [], "the refused offer left no file")
        limits.inodeReserve = 0
        XCTAssertNil(refusal(admit(try Inbox(directory: inboxPath, limits: limits), key(2, size: 0), size: 0)))
    }

    func testOneHostGetsNoMoreThanItsShareOfTransfers() throws {
        var limits = Inbox.Limits()
        limits.transfersPerHost = 2
        let inbox = try Inbox(directory: inboxPath, limits: limits)
        func fromHost(_ host: String, _ number: UInt8) -> PartialKey {
            PartialKey(digest: [UInt8](repeating: number, count: 32), size: 10, sender: host + "-\(number)", host: host)
        }
        XCTAssertNil(refusal(admit(inbox, fromHost("a", 1))))
        XCTAssertNil(refusal(admit(inbox, fromHost("a", 2))), "another member of the same host")
        XCTAssertEqual(refusal(admit(inbox, fromHost("a", 3))), "at most 2 files may arrive from one host at a time; send this one when the others are done")
        XCTAssertNil(refusal(admit(inbox, fromHost("b", 4))), "another host still gets in")
    }

    func testTheSenderWithTheMostPartialDataLosesItsOwnFirst() throws {
        var limits = Inbox.Limits()
        limits.partialMaximumCount = 4
        _ = try Inbox(directory: inboxPath, limits: limits)
        try plantPartial("victim-aaaa", age: 600) // the oldest of all, from a sender with one file
        for index in 0..<6 { try plantPartial("flood\(index)-bbbb", age: 100 - index) }
        _ = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertEqual(partialNames(), ["flood3-bbbb", "flood4-bbbb", "flood5-bbbb", "victim-aaaa"],
                       "a sender that floods .partial pushes out its own files, not the victim's")
    }

    func testRelayedFilesCountPerServerAndSendersHostHoweverManyNamesItTakes() throws {
        var limits = Inbox.Limits()
        limits.partialMaximumCount = 4
        _ = try Inbox(directory: inboxPath, limits: limits)
        func relayed(_ byte: UInt8, host: String, member: String) -> String {
            PartialKey(digest: [UInt8](repeating: byte, count: 32), size: 10, sender: "10.0.0.1 relayed from host " + host, member: member).name
        }
        let victim = relayed(1, host: "a1", member: "alice")
        try plantPartial(victim, age: 600)
        let flood = (0..<6).map { relayed(UInt8(2 + $0), host: "b2", member: "name\($0)") }
        for (index, name) in flood.enumerated() { try plantPartial(name, age: 100 - index) }
        XCTAssertEqual(Set(flood.map { $0.split(separator: "-").last }).count, 1, "one sender, whatever its names")
        _ = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertEqual(partialNames(), ([victim] + flood.suffix(3)).sorted(), "a host flooding under many names pushes out its own files")
    }

    func testPartialDataExpiresByAge() throws {
        var limits = Inbox.Limits()
        limits.partialMaximumAge = .seconds(60)
        _ = try Inbox(directory: inboxPath, limits: limits)
        try plantPartial("old", age: 120)
        try plantPartial("recent", age: 30)
        try FileManager.default.createSymbolicLink(atPath: inboxPath + "/.partial/link", withDestinationPath: "/etc/passwd")
        _ = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertEqual(partialNames(), ["recent"])
    }

    func testPartialDataIsBoundedByCountOldestFirstNeverOneInUse() throws {
        var limits = Inbox.Limits()
        limits.partialMaximumCount = 3
        let inbox = try Inbox(directory: inboxPath, limits: limits)
        let inUse = key(9)
        _ = try admit(inbox, inUse).get()
        try plantPartial(inUse.name, age: 500) // the oldest of all, but in use
        for (index, age) in [50, 40, 30, 20, 10].enumerated() { try plantPartial("p\(index)", age: age) }
        inbox.removeStalePartials(makingRoomFor: 0)
        XCTAssertEqual(partialNames(), [inUse.name, "p3", "p4"].sorted())
        XCTAssertNil(refusal(admit(inbox, key(8))), "an offer makes room for its own file first")
        XCTAssertEqual(partialNames(), [inUse.name, key(8).name, "p4"].sorted())
    }

    func testPartialDataIsBoundedByBytesOldestFirst() throws {
        var limits = Inbox.Limits()
        limits.partialMaximumBytes = 100
        _ = try Inbox(directory: inboxPath, limits: limits)
        try plantPartial("oldest", bytes: 10, age: 30)
        try plantPartial("older", bytes: 60, age: 20)
        try plantPartial("newest", bytes: 60, age: 10)
        _ = try Inbox(directory: inboxPath, limits: limits)
        XCTAssertEqual(partialNames(), ["newest"], "older data goes first, even when it would fit")
    }

    // MARK: Keys

    func testPartialKeysSeparateSizesAndSenders() {
        XCTAssertNotEqual(key(1, size: 10).name, key(1, size: 11).name)
        XCTAssertNotEqual(key(1, sender: "10.0.0.2").name, key(1, sender: "10.0.0.3").name)
        XCTAssertEqual(key(1).name, key(1).name)
        XCTAssertTrue(key(1).name.hasPrefix(String(repeating: "01", count: 32) + "-10-"), key(1).name)
        XCTAssertTrue(key(1).name.allSatisfy { $0.isASCII && ($0.isHexDigit || $0.isNumber || $0 == "-") })
    }
}
