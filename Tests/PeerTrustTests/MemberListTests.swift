import Foundation
import PeerTrust
import TransportCore
import XCTest

/// The members file: lines read safely (bad ones skipped, their keys not listed), bounds, and
/// an atomic rewrite that keeps every line.
final class MemberListTests: XCTestCase {
    let keyA = PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")!
    let keyB = PublicKeyFingerprint("SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")!

    func testLinesCommentsAndUnreadableLines() {
        let text = """
            # the team
            \(keyA.full) ada\r
            \(keyB.full)
            SHA256:short bob
            \(keyA.full) other
            \(PublicKeyFingerprint(bytes: [UInt8](repeating: 1, count: 32))!.full) bad\u{7}name

            """
        let list = MemberList(parsing: Array(text.utf8))
        XCTAssertEqual(list.entry(for: keyA)?.name, "ada", "the first line of a key wins; a CR is not part of the name")
        XCTAssertEqual(list.entry(for: keyB)?.key, keyB)
        XCTAssertNil(list.entry(for: keyB)?.name)
        XCTAssertNil(list.entry(for: PublicKeyFingerprint(bytes: [UInt8](repeating: 1, count: 32))!), "a line with a bad name lists nobody")
        XCTAssertEqual(list.count, 2)
        XCTAssertEqual(list.warnings.map(\.lineNumber), [4, 6])
        XCTAssertEqual(list.bytes, Array(text.utf8), "every line is written back as it was")
    }

    func testAddingAppendsAndRefusesWhatIsThereOrPastTheBound() {
        var list = MemberList()
        XCTAssertTrue(list.add(keyA, name: "alice"))
        XCTAssertFalse(list.add(keyA, name: "other"))
        XCTAssertTrue(list.add(keyB, name: "bad\nname"), "a name that cannot be listed is left out")
        XCTAssertEqual(String(decoding: list.bytes, as: UTF8.self), "\(keyA.full) alice\n\(keyB.full)\n")
        var full = MemberList(parsing: Array(String(repeating: "#\n", count: MemberList.maximumLines).utf8))
        XCTAssertFalse(full.add(keyA, name: "alice"))
        let long = MemberList(parsing: Array(String(repeating: "#\n", count: MemberList.maximumLines + 1).utf8))
        XCTAssertEqual(long.incompleteness, "it has more than \(MemberList.maximumLines) lines")
        XCTAssertEqual(long.warnings.map(\.lineNumber), [MemberList.maximumLines + 1], "the lines not read are named, as known_peers does")
        let cut = MemberList(parsing: Array("\u{FEFF}\(keyA.full) alice\n\(keyB.full) bo".utf8), isWhole: false)
        XCTAssertEqual(cut.count, 1, "a byte-order mark is dropped and a cut last line is not read")
        XCTAssertNotNil(cut.incompleteness)
    }

    func testTheFileIsBesideTheIdentityAndRewrittenAtomically() throws {
        let directory = NSTemporaryDirectory() + "members-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = MembersFile(besideIdentity: directory + "/svc/identity.pem")
        XCTAssertEqual(file.path, directory + "/svc/members")
        XCTAssertEqual(try file.load().count, 0, "no file lists nobody")
        var list = try file.load()
        list.add(keyA, name: "alice")
        try file.save(list)
        XCTAssertEqual(try file.load().entry(for: keyA)?.name, "alice")
        let mode = (try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600)
        let incomplete = MemberList(parsing: Array("\(keyA.full) a\n".utf8), isWhole: false)
        XCTAssertThrowsError(try file.save(incomplete))
    }
}

/// Issue 13 review: one name (as the room compares names) is listed for one key.
extension MemberListTests {
    func testANameListedForOneKeyIsNotGivenToAnotherAndClashesAreReported() {
        let keyC = PublicKeyFingerprint("SHA256:" + String(repeating: "A", count: 43))!
        let list0 = MemberList(parsing: Array("\(keyA.full) ada\n\(keyB.full) ADA\n".utf8))
        XCTAssertEqual(list0.holder(ofName: "Ada"), keyA, "the first line holds the name")
        XCTAssertEqual(list0.clashingNames.map(\.name), ["ada"])
        XCTAssertEqual(list0.clashingNames.first?.keys, [keyA.short, keyB.short])

        var list = MemberList(parsing: Array("\(keyA.full) ada\n".utf8))
        XCTAssertTrue(list.add(keyC, name: "ADA"))
        XCTAssertNil(list.entry(for: keyC)?.name, "a look-alike of a listed name is not stored")
        XCTAssertEqual(list.holder(ofName: "ada"), keyA)
        XCTAssertTrue(list.clashingNames.isEmpty)
    }
}
