import Foundation
import XCTest

/// Files offered before they are hashed (capability 128, docs/PROTOCOL.md "Files") between the
/// real tools and the Python peer (Scripts/svc-peer.py, written from the document), and with a
/// peer from before: each way is verified end to end, and a streamed file never goes to a
/// member that would need its digest first.
final class StreamedFileTests: FileTestCase {
    override var directoryPrefix: String { "svc-streamed" }

    func publish(_ name: String, inbox: String) throws -> (ToolProcess, port: Int) {
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--inbox", inbox, "--json", "--allow-plaintext"])
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        return (publisher, try XCTUnwrap(registered["port"] as? Int))
    }

    /// svc-peer.py on host b over plain TCP, with `arguments`.
    func pythonPeer(port: Int, _ arguments: [String]) throws -> ToolProcess {
        try TestLAN.command(on: "b", ["/usr/bin/python3", TestLAN.script("svc-peer.py"), TestLAN.addresses(of: "a").ipv4, String(port), "--plaintext"]
                            + arguments)
    }

    func testThePythonPeerStreamsAFileAndAnOlderPeerStillSendsDigestFirst() throws {
        let (path, digest) = try randomFile(megabytes: 20)
        let inbox = directory + "/inbox"
        let (publisher, port) = try publish(TestLAN.uniqueName("streams"), inbox: inbox)

        let streaming = try pythonPeer(port: port, ["--name", "streaming", "--send", path])
        streaming.closeStdin() // it leaves once its file is through
        XCTAssertEqual(streaming.waitForExit(timeout: 60), 0, streaming.transcript)
        let offer = try XCTUnwrap(streaming.jsonEvents.first { $0["event"] as? String == "sent" && $0["frame"] as? String == "file-offer" },
                                  streaming.transcript)
        XCTAssertEqual(offer["streamed"] as? Bool, true, "both HELLOs announce capability 128")
        XCTAssertNotEqual(offer["sha256"] as? String, digest, "offered by its resume tag")
        let stored = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "file-stored" }, publisher.transcript)
        XCTAssertEqual(stored["sha256"] as? String, digest, "the digest came with FILE_END")
        XCTAssertEqual(try sha256(of: inbox + "/payload.bin"), digest)

        let older = try pythonPeer(port: port, ["--name", "older", "--no-streamed-files", "--send", path])
        older.closeStdin()
        XCTAssertEqual(older.waitForExit(timeout: 60), 0, older.transcript)
        let oldOffer = try XCTUnwrap(older.jsonEvents.first { $0["event"] as? String == "sent" && $0["frame"] as? String == "file-offer" },
                                     older.transcript)
        XCTAssertEqual(oldOffer["streamed"] as? Bool, false)
        XCTAssertEqual(oldOffer["sha256"] as? String, digest)
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "file-stored" && $0["from"] as? String == "older" }, publisher.transcript)
        XCTAssertEqual(inboxFiles(inbox), ["payload (2).bin", "payload.bin"], "another sender's copy is its own")
        XCTAssertEqual(try sha256(of: inbox + "/payload (2).bin"), digest)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    func testAMemberThatStreamsGetsAnOlderPeersFileAndIsToldItCannotStreamToIt() throws {
        let (path, _) = try randomFile(megabytes: 3)
        let name = TestLAN.uniqueName("mixed")
        let (publisher, port) = try publish(name, inbox: directory + "/inbox")
        let olderInbox = directory + "/older"
        try FileManager.default.createDirectory(atPath: olderInbox, withIntermediateDirectories: true)
        let older = try pythonPeer(port: port, ["--name", "older", "--no-streamed-files", "--inbox", olderInbox, "--linger", "20"])
        XCTAssertNotNil(older.waitForEvent { $0["event"] as? String == "received" && $0["frame"] as? String == "welcome" }, older.transcript)
        let alice = try TestLAN.run("svc-connect", on: "b", [name, "--as", "alice", "--json", "--allow-plaintext"])
        XCTAssertNotNil(alice.waitForEvent { $0["event"] as? String == "joined" }, alice.transcript)

        alice.send("/send older \(path)")
        XCTAssertNotNil(waitForStderr(alice, timeout: 30) { $0.contains("does not announce streamed files") }, alice.transcript)
        XCTAssertEqual(inboxFiles(olderInbox), [])
        alice.closeStdin()
        XCTAssertEqual(alice.waitForExit(), 74, "the file was not delivered: " + alice.transcript)
        older.signal(SIGTERM)
        _ = older.waitForExit()
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
