import Foundation
import XCTest

/// The user's own Ctrl-C during `--send`: said to be an interruption (not blamed on the
/// receiver), with the way to resume; sending again resumes.
extension FileTransferTests {
    func testCtrlCDuringASendSaysInterruptedAndSendingAgainResumes() throws {
        let (path, digest) = try randomFile(megabytes: 200)
        let tag = try resumeTag(of: path) // svc-connect streams: its partial data is named by the tag
        let inbox = directory + "/inbox"
        let name = TestLAN.uniqueName("impatient sender")
        let liftShaping = try shapeHostB()
        defer { liftShaping() }

        let publisher = try publish(name, inbox: inbox)
        let sender = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertGreaterThanOrEqual(waitForPartial(inbox, named: tag, atLeast: 50 << 20), 50 << 20, "the transfer never got going\n" + sender.transcript)
        sender.signal(SIGINT)
        XCTAssertEqual(sender.waitForExit(timeout: 15), 130, sender.transcript)
        XCTAssertTrue(sender.stderr.contains("svc-connect: error: \(path) was not delivered: interrupted; send it again to resume"), sender.transcript)
        XCTAssertTrue(sender.stderr.contains("svc-connect: error: interrupted; 1 item was not delivered, listed above"), sender.transcript)
        XCTAssertFalse(sender.stderr.contains { $0.contains("receiver") || $0.contains("reset") || $0.contains("peer") }, "the peer is not blamed: " + sender.transcript)

        liftShaping()
        let resumed = try TestLAN.run("svc-connect", on: "b", [name, "--send", path, "--json"])
        XCTAssertEqual(resumed.waitForExit(timeout: 120), 0, resumed.transcript)
        let sent = try XCTUnwrap(resumed.jsonEvents.first { $0["event"] as? String == "file-sent" }, resumed.transcript)
        XCTAssertLessThan(try XCTUnwrap(sent["bytes_transferred"] as? Int), 200 << 20, "it resumed")
        XCTAssertEqual(sent["sha256"] as? String, digest)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
