import Foundation
import DiscoveryCore
import PeerTrust
import TransportCore
import XCTest

final class KnownPeersTests: XCTestCase {
    let keyA = PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")!
    let keyB = PublicKeyFingerprint("SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")!

    func instance(_ name: String) -> ServiceInstance { ServiceInstance(name: name, type: .p2pipp, domain: .local) }
    func parse(_ text: String) -> KnownPeers { KnownPeers(parsing: Array(text.utf8)) }
    func text(_ peers: KnownPeers) -> String { String(decoding: peers.bytes, as: UTF8.self) }

    func testReadsPinsAndKeepsCommentsAndBlankLines() throws {
        let file = """
            # pinned by svc-connect
            Living\\032room._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0

            \tKitchen._p2pipp._tcp.local.\t  SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o\r

            """
        let peers = parse(file)
        XCTAssertEqual(peers.warnings, [])
        XCTAssertNil(peers.incompleteness)
        XCTAssertEqual(peers.pin(for: instance("Living room"))?.key, keyA)
        XCTAssertEqual(peers.pin(for: instance("Living room"))?.lineNumber, 2)
        XCTAssertEqual(peers.pin(for: instance("kitchen"))?.key, keyB, "ASCII case is ignored")
        XCTAssertEqual(peers.pin(for: instance("Kitchen"))?.lineNumber, 4)
        XCTAssertNil(peers.pin(for: instance("Living")))
        XCTAssertNil(peers.pin(for: ServiceInstance(name: "Kitchen", type: try ServiceType("_other._tcp"), domain: .local)))
        XCTAssertEqual(text(peers), file.replacingOccurrences(of: "\t  SHA256", with: " SHA256")
            .replacingOccurrences(of: "\tKitchen", with: "Kitchen").replacingOccurrences(of: "\r", with: ""),
                       "pins are written in one spelling; comments and blank lines stay")
    }

    func testBadLinesAreSkippedWithAWarningAndKept() {
        let file = """
            just-one-field
            Living\\032room._p2pipp._tcp.local. SHA256:ungWv48Bz+pB
            Living room._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0
            a._p2pipp._tcp.local. ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0
            a._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0 extra
            noname SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0
            b._p2pipp._tcp.local. SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o

            """
        var peers = parse(file)
        XCTAssertEqual(peers.warnings.map(\.lineNumber), [1, 2, 3, 4, 5, 6])
        XCTAssertTrue(peers.warnings[0].description.hasPrefix("line 1: skipped: expected '<service> <key>'"), peers.warnings[0].description)
        XCTAssertTrue(peers.warnings[1].reason.contains("full fingerprint"), "a short key is no pin")
        XCTAssertTrue(peers.warnings[5].reason.contains("DNS-SD name"))
        XCTAssertEqual(peers.pins.map(\.lineNumber), [7])
        XCTAssertEqual(peers.warningNotes(path: "/k", limit: 2), [
            "'/k' line 1: skipped: expected '<service> <key>', two fields (and perhaps a # comment), not 1",
            "'/k' line 2: skipped: the key is not a full fingerprint, SHA256: and 43 characters of base64",
            "'/k': 4 more lines skipped",
        ])
        XCTAssertEqual(peers.warningNotes(path: "/k").count, 6)
        XCTAssertNil(peers.incompleteness, "bad lines are kept, so the file may be written back")
        peers.pin(keyA, for: instance("c"))
        XCTAssertEqual(text(peers), file + "c._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\n")
    }

    func testOverlongLinesAreSkippedAndTheFileIsNotWrittenBack() {
        let long = "x._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0" + String(repeating: " ", count: 1_000)
        XCTAssertGreaterThan(long.utf8.count, KnownPeers.maximumLineLength)
        let limit = "y._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"
        let padded = limit + String(repeating: " ", count: KnownPeers.maximumLineLength - limit.utf8.count)
        let peers = parse("\(long)\n\(padded)\n")
        XCTAssertNil(peers.pin(for: instance("x")))
        XCTAssertEqual(peers.pin(for: instance("y"))?.lineNumber, 2, "1,024 bytes are read; line numbers count the skipped line")
        XCTAssertEqual(peers.warnings.map(\.description), ["line 1: skipped: longer than 1024 bytes"])
        XCTAssertEqual(peers.incompleteness, "line 1 is longer than 1024 bytes")
    }

    func testAtMostTenThousandLinesAreRead() {
        var file = String(repeating: "# comment\n", count: KnownPeers.maximumLines - 1)
        file += "a._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\n"
        file += "b._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\n"
        let peers = parse(file)
        XCTAssertEqual(peers.pin(for: instance("a"))?.lineNumber, 10_000)
        XCTAssertNil(peers.pin(for: instance("b")), "line 10,001 is not read")
        XCTAssertEqual(peers.warnings.map(\.lineNumber), [10_001])
        XCTAssertNotNil(peers.incompleteness)
        XCTAssertNil(parse(String(file.dropLast(76))).incompleteness, "exactly 10,000 lines are whole")
    }

    func testAFileCutByTheReaderLosesItsLastPartialLine() {
        let file = "a._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\nb._p2pipp._tcp.local. SHA256:ungW"
        let peers = KnownPeers(parsing: Array(file.utf8), isWhole: false)
        XCTAssertEqual(peers.pins.count, 1)
        XCTAssertNotNil(peers.incompleteness)
        let cutAfterANewline = KnownPeers(parsing: Array(file.prefix(73).utf8), isWhole: false)
        XCTAssertEqual(cutAfterANewline.pins.count, 1, "a whole line before the cut is read")
    }

    func testPinAddsOrReplacesAndForgetRemoves() {
        var peers = parse("# mine\nb._p2pipp._tcp.local. \(keyA.full)\nB._p2pipp._tcp.local. \(keyA.full)\n# end\n")
        let added = peers.pin(keyB, for: instance("Living room"))
        XCTAssertEqual(added.lineNumber, 5)
        XCTAssertEqual(added.service.presentation, #"Living\032room._p2pipp._tcp.local."#)
        let replaced = peers.pin(keyB, for: instance("b"))
        XCTAssertEqual(replaced.lineNumber, 2)
        XCTAssertEqual(text(peers), """
            # mine
            b._p2pipp._tcp.local. \(keyB.full)
            # end
            Living\\032room._p2pipp._tcp.local. \(keyB.full)

            """, "replaced in place, the duplicate line removed")
        let removed = peers.forget(instance("living ROOM"))
        XCTAssertEqual(removed.map(\.lineNumber), [4])
        XCTAssertEqual(removed.first?.key, keyB)
        XCTAssertEqual(peers.forget(instance("Living room")), [], "nothing left to forget")
        XCTAssertEqual(text(peers), "# mine\nb._p2pipp._tcp.local. \(keyB.full)\n# end\n")
    }

    func testForgetRemovesEveryLineOfTheService() {
        var peers = parse("a._p2pipp._tcp.local. \(keyA.full)\n# x\nA._p2pipp._tcp.local. \(keyB.full)\n")
        XCTAssertEqual(peers.forget(instance("a")).map(\.lineNumber), [1, 3])
        XCTAssertEqual(text(peers), "# x\n")
    }

    func testHostileNamesRoundTripThroughTheFile() {
        var peers = KnownPeers()
        let names = ["Living room", "a.b.c", #"back\slash\"#, "tab\tnew\nline", "\u{1B}]0;title\u{7}", "Küche 打印机 🎉", "#hash", "  lead"]
        for (offset, name) in names.enumerated() { XCTAssertEqual(peers.pin(offset % 2 == 0 ? keyA : keyB, for: instance(name)).lineNumber, offset + 1) }
        let written = text(peers)
        XCTAssertEqual(written.split(separator: "\n").count, names.count, "one line per pin: " + written)
        let reread = parse(written)
        XCTAssertEqual(reread.warnings, [])
        for (offset, name) in names.enumerated() {
            XCTAssertEqual(reread.pin(for: instance(name))?.key, offset % 2 == 0 ? keyA : keyB, name)
        }
    }
}

/// What a hand-edited file may hold, and what first contact must not do when a line that may
/// pin the service cannot be read (attack review: such a pin was replaced by the attacker's key).
final class KnownPeersLenienceTests: XCTestCase {
    let keyA = PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")!

    func instance(_ name: String) -> ServiceInstance { ServiceInstance(name: name, type: .p2pipp, domain: .local) }

    func testATrailingCommentALowerCasePrefixAndAByteOrderMarkAreRead() {
        let file = "\u{FEFF}Office._p2pipp._tcp.local. sha256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0   # the office\r\n"
        var peers = KnownPeers(parsing: Array(file.utf8))
        XCTAssertEqual(peers.warnings, [])
        XCTAssertEqual(peers.pin(for: instance("Office"))?.key, keyA)
        XCTAssertNil(peers.uncertainty(about: instance("Office")))
        peers.pin(keyA, for: instance("Other"))
        XCTAssertEqual(String(decoding: peers.bytes, as: UTF8.self),
                       "Office._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0 # the office\n"
                       + "Other._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\n", "the comment stays")
    }

    func testALineThatCannotBeReadMakesFirstContactsUncertain() {
        let peers = KnownPeers(parsing: Array("Office._p2pipp._tcp.local. SHA256:short\nKitchen._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\n".utf8))
        XCTAssertNil(peers.pin(for: instance("Office")))
        XCTAssertEqual(peers.uncertainty(about: instance("office")), "line 1 cannot be read (skipped: the key is not a full fingerprint, SHA256: and 43 characters of base64) and names it")
        XCTAssertEqual(peers.uncertainty(about: instance("Kitchen")).map { $0.hasSuffix("and may be meant for it") }, true,
                       "any line that cannot be read may be a pin written another way (a name alone, a quoted name): first contact waits")
        let policy = TrustPolicy(serviceName: "Office", pin: nil, knownPeersPath: "/k", unreadable: peers.uncertainty(about: instance("Office")))
        XCTAssertEqual(policy.refusalBeforeLookup()?.exitCode, 78)
        guard case .refuse(let refusal) = policy.decide(announced: .key(keyA)) else { return XCTFail("first contact went ahead") }
        XCTAssertTrue(refusal.message.contains("fix or remove that line"), refusal.message)
        let given = TrustPolicy(serviceName: "Office", pin: nil, knownPeersPath: "/k", fingerprint: keyA.full,
                                unreadable: peers.uncertainty(about: instance("Office")))
        XCTAssertNil(given.refusalBeforeLookup(), "a key given on the command line does not depend on the file")
    }

    func testNamesWithInvisibleCharactersOrPunctuatedDomainsAreSkippedSoFirstContactWaits() {
        let key = "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"
        for line in ["Kitchen._p2pipp._tcp.local. \(key)\n\u{FEFF}Office._p2pipp._tcp.local. \(key)",
                     "\"Office._p2pipp._tcp.local.\" \(key)",
                     "Office._p2pipp._tcp.local.\u{200B} \(key)"] {
            let peers = KnownPeers(parsing: Array((line + "\n").utf8))
            XCTAssertNil(peers.pin(for: instance("Office")), line)
            XCTAssertFalse(peers.warnings.isEmpty, "a pin for a look-alike name is not taken as another room's: \(line)")
            XCTAssertNotNil(peers.uncertainty(about: instance("Office")), line)
        }
        XCTAssertNotNil(KnownPeers(parsing: Array("Bob's\\032\"room\"._p2pipp._tcp.local. \(key)\n".utf8)).pin(for: instance("Bob's \"room\"")),
                        "quotes inside an instance name are fine")
    }

    func testAFileNotReadWholeMakesEveryUnpinnedServiceUncertain() {
        let peers = KnownPeers(parsing: Array("Office._p2pipp._tcp.local. SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\nKit".utf8), isWhole: false)
        XCTAssertNotNil(peers.uncertainty(about: instance("Kitchen")))
    }

    func testAKeyThatCouldNotBePinnedIsExpectedForTheRestOfTheSession() throws {
        let other = PublicKeyFingerprint("SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")!
        let policy = TrustPolicy(serviceName: "Office", pin: nil, knownPeersPath: "/k").pinnedForSession(keyA, whyNotPinned: "read-only")
        guard case .secure(let expectation) = policy.decide(announced: .key(other)) else { return XCTFail("refused") }
        XCTAssertTrue(expectation.accepts(keyA))
        XCTAssertFalse(expectation.accepts(other), "a new announcement does not make another key acceptable")
        XCTAssertFalse(expectation.pinsOnSuccess)
        XCTAssertEqual(expectation.rejection(of: other).exitCode, 77)
        XCTAssertTrue(expectation.rejection(of: other).message.contains("changed during this session"))
    }

    func testTheAnnouncedKeyMustBeExactlyTheFullForm() {
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: keyA.full), .key(keyA))
        for odd in ["sha256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0", "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0",
                    keyA.full + " ", "SHA256:ungWv48Bz+pB"] {
            XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: odd), .malformed, odd)
            XCTAssertNil(PublicKeyFingerprint(fullForm: odd), odd)
        }
    }
}
