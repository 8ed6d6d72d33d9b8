import Foundation
import XCTest

/// Files between virtual hosts: verified by SHA-256, nothing complete-looking left behind by a
/// broken transfer, and resumed when sent again.
final class FileTransferTests: FileTestCase {
    override var directoryPrefix: String { "svc-files" }

    /// Limits host b's outgoing rate to 200 Mbit/s, so 200 MB take about 8 s: long enough to
    /// break a transfer halfway. Call the returned closure to lift the limit.
    func shapeHostB() throws -> () -> Void {
        let shape = try TestLAN.command(on: "b", ["tc", "qdisc", "add", "dev", "veth0", "root", "tbf", "rate", "200mbit", "burst", "256kb", "latency", "100ms"])
        XCTAssertEqual(shape.waitForExit(), 0, shape.transcript)
        var lifted = false
        return {
            guard !lifted else { return }
            lifted = true
            _ = try? TestLAN.command(on: "b", ["tc", "qdisc", "del", "dev", "veth0", "root"]).waitForExit()
        }
    }

    /// Publishes `name` on host a with `inbox`; `--allow-plaintext` with `plaintext` (for the
    /// hostile plaintext tools: the frame layer they attack is the same inside TLS).
    func publish(_ name: String, inbox: String, plaintext: Bool = false) throws -> ToolProcess {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--inbox", inbox, "--json"] + (plaintext ? ["--allow-plaintext"] : []))
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return publisher
    }

    func test200MegabytesArriveVerified() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("files")
        let publisher = try publish(name, inbox: inbox)
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertEqual(sender.waitForExit(timeout: 120), 0, sender.transcript)
        let sent = try XCTUnwrap(sender.jsonEvents.first { $0["event"] as? String == "file-sent" }, sender.transcript)
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertEqual(sent["size"] as? Int, 200 << 20)
        XCTAssertEqual(sent["bytes_transferred"] as? Int, 200 << 20)
        let stored = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "file-stored" }, publisher.transcript)
        XCTAssertEqual(stored["sha256"] as? String, digest)
        XCTAssertEqual(inboxFiles(inbox), ["payload.bin"])
        XCTAssertEqual(try sha256(of: inbox + "/payload.bin"), digest)

        // The same content again is not stored twice: the sender is told the file already there.
        let again = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertEqual(again.waitForExit(timeout: 120), 0, again.transcript)
        let repeated = try XCTUnwrap(again.jsonEvents.first { $0["event"] as? String == "file-sent" }, again.transcript)
        XCTAssertEqual(repeated["stored_as"] as? String, "payload.bin")
        XCTAssertEqual(repeated["bytes_transferred"] as? Int, 0)
        XCTAssertEqual(inboxFiles(inbox), ["payload.bin"])

        // Other content under the same name is stored beside it, never over it.
        try FileManager.default.createDirectory(atPath: directory + "/other", withIntermediateDirectories: true)
        try "other content\n".write(toFile: directory + "/other/payload.bin", atomically: true, encoding: .utf8)
        let other = try TestLAN.run("svc-connect", on: "b", [name, "--send", directory + "/other/payload.bin"])
        XCTAssertEqual(other.waitForExit(timeout: 60), 0, other.transcript)
        XCTAssertEqual(inboxFiles(inbox), ["payload (2).bin", "payload.bin"])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testThePublisherKilledMidTransferAndRestartedGetsOneVerifiedCopy() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let tag = try resumeTag(of: path) // svc-connect streams: its partial data is named by the tag
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("phoenix-files")
        let liftShaping = try shapeHostB()
        defer { liftShaping() }

        let first = try publish(name, inbox: inbox)
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertGreaterThanOrEqual(waitForPartial(inbox, named: tag, atLeast: 60 << 20), 60 << 20, sender.transcript)
        first.signal(SIGKILL)
        _ = first.waitForExit()
        let second = try publish(name, inbox: inbox)
        XCTAssertEqual(sender.waitForExit(timeout: 120), 0, sender.transcript + second.transcript)
        let sent = try XCTUnwrap(sender.jsonEvents.first { $0["event"] as? String == "file-sent" }, sender.transcript)
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertLessThan(try XCTUnwrap(sent["bytes_transferred"] as? Int), 200 << 20, "resumed, not started over")
        XCTAssertTrue(sender.stderr.contains { $0.contains("reconnecting in") }, sender.transcript)
        XCTAssertEqual(inboxFiles(inbox), ["payload.bin"], "exactly one complete copy")
        XCTAssertEqual(try sha256(of: inbox + "/payload.bin"), digest)
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }

    func testHostileFileOffersNeverWriteOutsideTheInbox() throws {
        let inbox = directory + "/inbox"
        let passwd = try sha256(of: "/etc/passwd")
        let name = TestLAN.uniqueName("vault")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        let port = try XCTUnwrap(publisher.jsonEvents.first { $0["event"] as? String == "registered" }?["port"] as? Int)
        let member = try TestLAN.run("svc-connect", on: "b", [name, "--as", "bystander", "--json"])
        XCTAssertNotNil(member.waitForEvent { $0["event"] as? String == "joined" }, member.transcript)
        func results(_ mode: String) throws -> [[String: Any]] {
            let peer = try TestLAN.command(on: "b", ["/usr/bin/python3", TestLAN.script("hostile-peer"), TestLAN.addresses(of: "a").ipv4, String(port), mode])
            _ = peer.waitForExit(timeout: 40)
            return peer.jsonEvents.filter { $0["type"] as? Int == 0x24 }
        }

        let stored = try results("file-names")
        XCTAssertEqual(stored.map { $0["status"] as? Int }, Array(repeating: 0, count: 8), "\(stored)")
        let expected = ["passwd", "passwd (2)", "b", "file", "file (2)", "new_line", "nul_byte", String(repeating: "n", count: 255)]
        XCTAssertEqual(stored.map { $0["message"] as? String ?? "" }, expected)
        XCTAssertEqual(inboxFiles(inbox), expected.sorted())

        let huge = try results("file-huge")
        XCTAssertEqual(huge.first?["status"] as? Int, 2)
        XCTAssertTrue((huge.first?["message"] as? String ?? "").contains("not enough space"), "\(huge)")
        let forged = try results("file-bad-sum")
        XCTAssertEqual(forged.first?["status"] as? Int, 1, "checksum mismatch")
        let extra = try results("file-extra")
        XCTAssertEqual(extra.first?["status"] as? Int, 2)
        XCTAssertTrue((extra.first?["message"] as? String ?? "").contains("more data than"), "\(extra)")

        XCTAssertEqual(inboxFiles(inbox), expected.sorted(), "nothing forged or oversized was stored")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["inbox"], "nothing outside the inbox")
        XCTAssertEqual(try sha256(of: "/etc/passwd"), passwd)
        publisher.send("still serving")
        XCTAssertNotNil(member.waitForEvent { $0["text"] as? String == "still serving" }, member.transcript)
        member.closeStdin()
        XCTAssertEqual(member.waitForExit(), 0, member.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testABrokenTransferLeavesNoCompleteLookingFileAndResumes() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let tag = try resumeTag(of: path) // svc-connect streams: its partial data is named by the tag
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("resume")
        let liftShaping = try shapeHostB()
        defer { liftShaping() }

        let first = try publish(name, inbox: inbox)
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--no-reconnect", "--json"])
        XCTAssertGreaterThanOrEqual(waitForPartial(inbox, named: tag, atLeast: 90 << 20), 90 << 20, "the transfer never got halfway\n" + sender.transcript)
        first.signal(SIGKILL)
        _ = first.waitForExit()

        XCTAssertEqual(sender.waitForExit(timeout: 30), 74, sender.transcript)
        XCTAssertTrue(sender.stderr.contains { $0.contains("was not delivered") }, sender.transcript)
        XCTAssertFalse(sender.jsonEvents.contains { $0["event"] as? String == "file-sent" }, "no success was reported")
        XCTAssertEqual(inboxFiles(inbox), [], "nothing that looks complete")
        let kept = partialSize(inbox, named: tag)
        XCTAssertGreaterThan(kept, 0, "the partial data is kept for resuming")
        XCTAssertLessThan(kept, 200 << 20)

        liftShaping()
        let second = try publish(name, inbox: inbox)
        let resumed = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertEqual(resumed.waitForExit(timeout: 120), 0, resumed.transcript)
        let sent = try XCTUnwrap(resumed.jsonEvents.first { $0["event"] as? String == "file-sent" }, resumed.transcript)
        let transferred = try XCTUnwrap(sent["bytes_transferred"] as? Int)
        XCTAssertLessThanOrEqual(transferred, (200 << 20) - kept, "only what the receiver lacked was sent")
        XCTAssertLessThan(transferred, 150 << 20, "well under the whole file")
        XCTAssertEqual(sent["sha256"] as? String, digest)
        XCTAssertEqual(inboxFiles(inbox), ["payload.bin"])
        XCTAssertEqual(try sha256(of: inbox + "/payload.bin"), digest)
        XCTAssertEqual(partials(inbox, named: tag), [], "the partial data became the stored file")
        second.signal(SIGTERM)
        XCTAssertEqual(second.waitForExit(), 0)
    }
}

/// The bounds of README.md "Files: bounds", each against a hostile peer (Scripts/hostile-peer),
/// with a well-behaved member served meanwhile or right after.
extension FileTransferTests {
    /// Runs a hostile-peer mode from `host` against the publisher on host a.
    func hostile(_ mode: [String], from host: String = "b", port: Int) throws -> ToolProcess {
        try TestLAN.command(on: host, ["/usr/bin/python3", TestLAN.script("hostile-peer"), TestLAN.addresses(of: "a").ipv4, String(port)] + mode)
    }

    func port(of publisher: ToolProcess) throws -> Int {
        try XCTUnwrap(publisher.jsonEvents.first { $0["event"] as? String == "registered" }?["port"] as? Int)
    }

    /// A small file, sent by a well-behaved member from host b; returns the sender's exit status.
    func sendSmallFile(to name: String, as member: String) throws -> ToolProcess {
        let path = directory + "/\(member).txt"
        try Data("hello from \(member)\n".utf8).write(to: URL(fileURLWithPath: path))
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--as", member, "--send", path, "--json"])
        _ = sender.waitForExit(timeout: 30)
        return sender
    }

    /// Waits until `.partial` holds exactly `expected` (files left by ended transfers go when
    /// their link's last disk work is done).
    func waitForPartials(_ inbox: String, toBe expected: [String]) -> [String] {
        let deadline = Date().addingTimeInterval(10)
        var names: [String] = []
        repeat {
            names = ((try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.partial")) ?? []).sorted()
            if names == expected { break }
            usleep(50_000)
        } while Date() < deadline
        return names
    }

    func testAnOfferFloodIsBoundedPerMemberAndLeavesNoPartialFiles() throws {
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("flood")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        let flood = try hostile(["offer-flood", "1", "50"], port: port(of: publisher))
        let summary = try XCTUnwrap(flood.waitForEvent(timeout: 30) { $0["accepted"] != nil }, flood.transcript)
        XCTAssertEqual(summary["accepted"] as? Int, 4, "\(summary)")
        XCTAssertEqual(summary["refused"] as? Int, 46, "\(summary)")
        XCTAssertEqual(summary["messages"] as? [String], ["at most 4 files may arrive from one member at a time; send this one when the others are done"])

        let good = try sendSmallFile(to: name, as: "alice")
        XCTAssertEqual(good.waitForExit(), 0, "another member is served while the flood holds its four\n" + good.transcript)
        flood.closeStdin()
        _ = flood.waitForExit(timeout: 10)
        XCTAssertEqual(waitForPartials(inbox, toBe: []), [], "offers that sent no data leave no partial file")
        XCTAssertEqual(inboxFiles(inbox), ["alice.txt"])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testOneHostsMembersTogetherGetNoMoreThanTheHostsShare() throws {
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("hog")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        // Ten members of host b offer four files each: together they get the host's sixteen.
        let hog = try hostile(["offer-flood", "10", "4"], port: port(of: publisher))
        let summary = try XCTUnwrap(hog.waitForEvent(timeout: 30) { $0["accepted"] != nil }, hog.transcript)
        XCTAssertEqual(summary["accepted"] as? Int, 16, "\(summary)")
        XCTAssertEqual(summary["refused"] as? Int, 24, "\(summary)")
        XCTAssertEqual(summary["messages"] as? [String], ["at most 16 files may arrive from one host at a time; send this one when the others are done"])

        // Another member from the same address is refused...
        let sameAddress = try hostile(["file-names"], port: port(of: publisher))
        XCTAssertEqual(sameAddress.waitForExit(timeout: 30), 0, "it stops after its eight answers\n" + sameAddress.transcript)
        let results = sameAddress.jsonEvents.filter { $0["status"] != nil }
        XCTAssertEqual(Set(results.compactMap { $0["message"] as? String }),
                       ["at most 16 files may arrive from one host at a time; send this one when the others are done"], sameAddress.transcript)
        // ...while one from another address (svc-connect answers over IPv6 first) is served.
        let otherAddress = try sendSmallFile(to: name, as: "alice")
        XCTAssertEqual(otherAddress.waitForExit(), 0, otherAddress.transcript)
        hog.closeStdin()
        _ = hog.waitForExit(timeout: 10)
        XCTAssertEqual(waitForPartials(inbox, toBe: []), [])
        let served = try sendSmallFile(to: name, as: "bob")
        XCTAssertEqual(served.waitForExit(), 0, "served once the hog is gone\n" + served.transcript)
        XCTAssertEqual(inboxFiles(inbox), ["alice.txt", "bob.txt"])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testParallelOffersCannotTogetherPromiseMoreThanTheFreeSpace() throws {
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("greedy")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        var stats = statvfs()
        XCTAssertEqual(statvfs(inbox, &stats), 0)
        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        let size = free / 3 // two fit, a third would eat into the 64 MiB reserve
        let greedy = try hostile(["parallel-offers", String(size), "4"], port: port(of: publisher))
        let summary = try XCTUnwrap(greedy.waitForEvent(timeout: 30) { $0["accepted"] != nil }, greedy.transcript)
        XCTAssertEqual(summary["accepted"] as? Int, 2, "each offer fits alone, but together only two do: \(summary)")
        XCTAssertEqual(summary["refused"] as? Int, 2, "\(summary)")
        let messages = summary["messages"] as? [String] ?? []
        XCTAssertFalse(messages.isEmpty)
        for message in messages {
            XCTAssertEqual(message, "not enough space in the inbox for \(size) more bytes; try again later", "the sender learns no figures")
        }
        // The owner does: what is free, promised and kept.
        let detail = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "file-failed" }, publisher.transcript)
        XCTAssertTrue((detail["reason"] as? String ?? "").contains("\(2 * size) are promised to transfers under way and 67108864 kept in reserve"), "\(detail)")
        let good = try sendSmallFile(to: name, as: "alice")
        XCTAssertEqual(good.waitForExit(), 0, "a small file still fits beside the promises\n" + good.transcript)
        greedy.closeStdin()
        _ = greedy.waitForExit(timeout: 10)
        XCTAssertEqual(waitForPartials(inbox, toBe: []), [])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testOneMemberThatOfferedAllTheFreeSpaceDoesNotKeepOthersOut() throws {
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("hoard")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        var stats = statvfs()
        XCTAssertEqual(statvfs(inbox, &stats), 0)
        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        // All the space offers may use but 16 MiB (other writers on this machine move it a little).
        let size = free - (64 << 20) - (16 << 20)
        let hoarder = try hostile(["parallel-offers", String(size), "1"], port: port(of: publisher))
        let summary = try XCTUnwrap(hoarder.waitForEvent(timeout: 30) { $0["accepted"] != nil }, hoarder.transcript)
        XCTAssertEqual(summary["accepted"] as? Int, 1, "alone, a member may be promised nearly all the free space: \(summary)")
        // 40 MiB did not fit beside the hoarder's promise; it counts for a quarter of the space now.
        let path = directory + "/honest.bin"
        try Data(repeating: 0x5A, count: 40 << 20).write(to: URL(fileURLWithPath: path))
        let honest = try TestLAN.run("svc-connect", on: "b", [name, "--as", "alice", "--send", path, "--json"])
        XCTAssertEqual(honest.waitForExit(timeout: 60), 0, "another member's file is accepted and stored\n" + honest.transcript)
        XCTAssertEqual(inboxFiles(inbox), ["honest.bin"])
        hoarder.closeStdin()
        _ = hoarder.waitForExit(timeout: 10)
        XCTAssertEqual(waitForPartials(inbox, toBe: []), [])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testAPartialCannotBeTruncatedOrProbedFromAnotherAddress() throws {
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("keeper")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        let port = try port(of: publisher)
        let digest = "631b84027d6b9e52b539c4e8373622d23032dfadc64d60af87339c9037e4f769"
        func run(_ mode: String, from host: String) throws -> [[String: Any]] {
            let peer = try hostile([mode], from: host, port: port)
            XCTAssertEqual(peer.waitForExit(timeout: 40), 0, peer.transcript)
            return peer.jsonEvents.filter { $0["type"] as? Int == 0x21 || $0["type"] as? Int == 0x24 }
        }
        let half = 1 << 19
        let started = try run("partial-start", from: "b")
        XCTAssertEqual(started.first?["offset"] as? Int, 0, "\(started)")
        XCTAssertEqual(waitForPartial(inbox, named: digest, atLeast: half), half)
        let actual = try XCTUnwrap(partials(inbox, named: digest).first.map { URL(fileURLWithPath: $0).lastPathComponent })

        // Another address learns nothing and changes nothing: both offers start at 0.
        let probe = try run("partial-truncate", from: "a")
        XCTAssertEqual(probe.map { $0["offset"] as? Int }, [0, 0], "\(probe)")
        // The sender itself: another size is another file; the real size resumes.
        let own = try run("partial-truncate", from: "b")
        XCTAssertEqual(own.map { $0["offset"] as? Int }, [0, half], "\(own)")
        XCTAssertEqual(waitForPartials(inbox, toBe: [actual]), [actual], "the empty partials of the probes are gone")
        XCTAssertEqual(partialSize(inbox, named: digest), half, "nothing was truncated")

        let finished = try run("partial-finish", from: "b")
        XCTAssertEqual(finished.first?["offset"] as? Int, half, "\(finished)")
        XCTAssertEqual(finished.last?["status"] as? Int, 0, "\(finished)")
        XCTAssertEqual(inboxFiles(inbox), ["partial.bin"])
        XCTAssertEqual(try sha256(of: inbox + "/partial.bin"), digest)
        XCTAssertEqual(waitForPartials(inbox, toBe: []), [])
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testRepliesMatchOnlyAFileThatWasOffered() throws {
        let (path, _) = try randomFile(megabytes: 3)
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("replies")
        let publisher = try publish(name, inbox: inbox, plaintext: true)
        let peer = try hostile(["result-unoffered"], port: port(of: publisher))
        func errors() -> [[String: Any]] { peer.jsonEvents.filter { $0["type"] as? Int == 0x04 } }
        XCTAssertTrue(eventually { errors().count >= 3 }, peer.transcript)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "joined" }, publisher.transcript)
        publisher.send("/send mallory \(path)")
        XCTAssertEqual(peer.waitForExit(timeout: 60), 0, peer.transcript)
        XCTAssertEqual(peer.jsonEvents.compactMap { $0["data_ok"] as? Bool }, [true], peer.transcript)
        XCTAssertEqual(errors().map { $0["error_code"] as? Int }, Array(repeating: 12, count: 6), "every stray reply was refused\n" + peer.transcript)
        XCTAssertTrue(eventually { publisher.stderr.contains { $0.contains("did not store") && $0.contains("no thanks") } }, publisher.transcript)
        XCTAssertFalse(publisher.jsonEvents.contains { $0["event"] as? String == "file-sent" }, "no success without a FILE_RESULT for the offer")
        let good = try sendSmallFile(to: name, as: "alice")
        XCTAssertEqual(good.waitForExit(), 0, good.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
