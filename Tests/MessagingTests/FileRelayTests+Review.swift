import Glibc
@testable import Messaging
import MessagingCore
import MessagingTesting
import TransportCore
import XCTest

/// A file relayed twice is answered stored at once: the answer's digest reaches a sender that
/// streams (which compares it) and is taken off for an older one (which wants the name alone).
extension FileRelayTests {
    func sendTwice(_ source: String, from alice: Member) {
        alice.send(source, to: "bob")
        scheduler.run()
        alice.send(source, to: "bob")
        scheduler.run()
    }

    func testAStreamedFileRelayedAgainIsStoredAtOnceWithTheDigestTheRecipientHolds() throws {
        let source = directory.write(content, to: "photo.jpg")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil, capabilities: .all)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), capabilities: .all)
        scheduler.run()
        sendTwice(source, from: alice)
        let again = try XCTUnwrap(alice.results.last).get()
        XCTAssertEqual(alice.results.count, 2)
        XCTAssertEqual(again.storedAs, "photo.jpg")
        XCTAssertEqual(again.bytesTransferred, 0)
        XCTAssertEqual(again.digest, sha256(content))
        XCTAssertEqual(alice.errors + bob.errors, [])
    }

    func testAnOlderSendersFileRelayedAgainIsStoredAtOnceUnderItsNameAlone() throws {
        let source = directory.write(content, to: "old.bin")
        let alice = Member("alice", server: server, scheduler: scheduler, inbox: nil, capabilities: .beforeStreamedFiles)
        let bob = Member("bob", server: server, scheduler: scheduler, inbox: try inbox("bob"), capabilities: .all)
        scheduler.run()
        sendTwice(source, from: alice)
        XCTAssertEqual(alice.results.count, 2)
        let again = try XCTUnwrap(alice.results.last).get()
        XCTAssertEqual(again.storedAs, "old.bin", "the digest before the name is taken off for an older sender")
        XCTAssertEqual(again.bytesTransferred, 0)
        XCTAssertEqual(alice.errors + bob.errors, [])
    }
}
