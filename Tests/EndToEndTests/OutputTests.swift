import Foundation
import XCTest

/// Output that nobody reads, output whose reader went away, and names that look alike, with
/// the real tools on the virtual LAN.
final class OutputTests: FileTestCase {
    override var directoryPrefix: String { "svc-output" }

    /// svc-connect as `member`; with `key`, under a key of its own (a member of another person).
    func join(_ name: String, as member: String, key: String? = nil) throws -> ToolProcess {
        let identity = key.map { ["--identity", keyFile($0)] } ?? []
        let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", member, "--json", "--timeout", "15"] + identity)
        // Throws when it did not join, so that nothing is written to a process that is gone.
        _ = try XCTUnwrap(client.waitForEvent(timeout: 20) { $0["event"] as? String == "joined" }, client.transcript)
        return client
    }

    /// Reads a FIFO until its last writer is gone, on a thread of its own.
    final class FIFOReader: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes = Data()
        private let done = DispatchSemaphore(value: 0)

        init(path: String) {
            let descriptor = open(path, O_RDONLY | O_NONBLOCK)
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(descriptor, &buffer, buffer.count)
                    if count > 0 {
                        lock.lock(); bytes.append(contentsOf: buffer[..<count]); lock.unlock()
                    } else if count == 0 || errno != EAGAIN {
                        break
                    } else {
                        usleep(1000)
                    }
                }
                close(descriptor)
                done.signal()
            }
        }

        /// The lines read, once the writer has gone (or after `timeout`).
        func lines(timeout: TimeInterval = 20) -> [String] {
            _ = done.wait(timeout: .now() + timeout)
            lock.lock(); defer { lock.unlock() }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }
    }

    /// svc-publish's stdout and stderr are FIFOs nobody reads (it holds them open for reading
    /// and writing itself, so writes fill them and then wait, as with a stalled pipe): the room
    /// keeps relaying 5 MB of text both ways, and once the FIFOs are read, the dropped lines
    /// are counted on stderr and every line that was written is whole.
    func testAPublisherWhoseOutputIsNeverReadKeepsServingTheRoom() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("svc-stalled-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for stream in ["out", "err"] { XCTAssertEqual(mkfifo("\(directory)/\(stream)", 0o600), 0) }
        let name = TestLAN.uniqueName("stalled")
        let publisher = try TestLAN.command(on: "a", ["sh", "-c", """
            exec 3<>"$1/out" 4<>"$1/err"; exec "$2" --name "$3" --json >&3 2>&4 3>&- 4>&-
            """, "sh", directory, TestLAN.tool("svc-publish"), name])

        // 80 lines of 64000-byte names: 5 MB of notes for a stderr nobody reads.
        let longName = String(repeating: "n", count: 64000)
        for _ in 0..<80 { publisher.send("/msg \(longName) hello") }

        let ann = try join(name, as: "ann")
        let bob = try join(name, as: "bob")
        XCTAssertNotNil(ann.waitForEvent { $0["event"] as? String == "presence" && $0["kind"] as? String == "joined" }, ann.transcript)
        let padding = String(repeating: "p", count: 1000)
        let count = 5000 // 5000 events of about 1.1 kB: more than the 4 MiB buffer and the FIFO hold
        for number in 0..<count { ann.send("line \(number) \(padding)") }
        let last = bob.waitForEvent(timeout: 60) { $0["event"] as? String == "text" && ($0["text"] as? String)?.hasPrefix("line \(count - 1) ") == true }
        XCTAssertNotNil(last, bob.stderr.joined(separator: "\n"))
        let received = bob.jsonEvents.filter { $0["event"] as? String == "text" && ($0["text"] as? String)?.hasPrefix("line ") == true }
        XCTAssertEqual(received.count, count, "every line arrived once")
        bob.send("and back")
        XCTAssertNotNil(ann.waitForEvent(timeout: 20) { $0["text"] as? String == "and back" }, ann.stderr.joined(separator: "\n"))

        // Now read: what was held comes out whole, and the gaps are counted.
        let out = FIFOReader(path: "\(directory)/out")
        let err = FIFOReader(path: "\(directory)/err")
        usleep(500_000)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(timeout: 20), 0, publisher.transcript)
        let outLines = out.lines()
        let errLines = err.lines()
        XCTAssertFalse(outLines.isEmpty)
        for line in outLines {
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(line.utf8)), "a torn line: \(line.prefix(80))")
        }
        XCTAssertTrue(errLines.contains { $0.hasPrefix("svc-publish: ") && $0.hasSuffix("lines were not written to standard output because it was not read fast enough") },
                      errLines.map { String($0.prefix(120)) }.joined(separator: "\n"))
        XCTAssertTrue(errLines.contains { $0.hasPrefix("svc-publish: ") && $0.hasSuffix("lines were not written to standard error because it was not read fast enough") },
                      errLines.map { String($0.prefix(120)) }.joined(separator: "\n"))
        for member in [ann, bob] {
            member.closeStdin()
            member.signal(SIGTERM)
            _ = member.waitForExit()
        }
    }

    /// `svc-browse | head -1` ends, quietly and with status 0, once `head` has its line.
    func testBrowseExitsWhenItsReaderGoesAway() throws {
        let name = TestLAN.uniqueName("headed")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let browse = try TestLAN.command(on: "b", ["bash", "-c", #""$1" | head -n 1; echo "status ${PIPESTATUS[0]}""#, "bash", TestLAN.tool("svc-browse")])
        XCTAssertEqual(browse.waitForExit(timeout: 20), 0, "svc-browse kept running after head exited: " + browse.transcript)
        XCTAssertEqual(browse.stdout.count, 2, browse.transcript)
        XCTAssertTrue(browse.stdout.first?.hasPrefix("added \"") == true, browse.transcript)
        XCTAssertEqual(browse.stdout.last, "status 0", browse.transcript)
        XCTAssertEqual(browse.stderr, [], "svc-browse exits quietly")
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }

    /// A publisher whose stdout reader has gone keeps serving, says so once on stderr, and
    /// still withdraws its service and exits 0 on SIGTERM.
    func testAPublisherWhoseStdoutClosedKeepsServing() throws {
        let name = TestLAN.uniqueName("headless")
        let publisher = try TestLAN.command(on: "a", ["bash", "-c", #"exec "$1" --name "$2" --no-timestamps > >(head -n 1)"#, "bash", TestLAN.tool("svc-publish"), name])
        XCTAssertNotNil(publisher.waitForLine { $0.hasPrefix("registered \"") }, publisher.transcript)
        let ann = try join(name, as: "ann")
        let bob = try join(name, as: "bob")
        XCTAssertNotNil(waitForStderr(publisher) { $0 == "svc-publish: standard output was closed: Broken pipe (errno 32); results are no longer printed" },
                        publisher.transcript)
        ann.send("still here")
        XCTAssertNotNil(bob.waitForEvent { $0["text"] as? String == "still here" }, bob.transcript)
        let browse = try TestLAN.run("svc-browse", on: "b", [])
        XCTAssertNotNil(browse.waitForLine { $0.hasPrefix("added \"\(name)\"") }, browse.transcript)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
        XCTAssertNotNil(browse.waitForLine { $0.hasPrefix("removed \"\(name)\"") }, "the service was withdrawn: " + browse.transcript)
        for process in [ann, bob, browse] {
            process.signal(SIGTERM)
            _ = process.waitForExit()
        }
    }

    /// Names that render alike get a suffix in a real room, `/msg` finds a member by a name
    /// that looks like its own, and names that hide or mix characters are refused up front.
    /// The four members are four people, so four keys (one key asking again for the name it
    /// holds would replace its own link instead).
    func testNamesThatLookAlikeCannotShareARoom() throws {
        let name = TestLAN.uniqueName("lookalike")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let alice = try join(name, as: "alice", key: "alice")
        let fullwidth = try join(name, as: "ＡLICE", key: "fullwidth")
        XCTAssertNotNil(fullwidth.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "ＡLICE-2" }, fullwidth.transcript)
        let capitals = try join(name, as: "ALI\u{301}CE", key: "capitals")
        XCTAssertNotNil(capitals.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "ALI\u{301}CE" }, capitals.transcript)
        let precomposed = try join(name, as: "alíce", key: "precomposed")
        XCTAssertNotNil(precomposed.waitForEvent { $0["event"] as? String == "joined" && $0["name"] as? String == "alíce-2" }, precomposed.transcript)

        precomposed.send("/msg ａｌｉｃｅ for the first alice")
        let message = alice.waitForEvent { $0["text"] as? String == "for the first alice" }
        XCTAssertEqual(message?["to"] as? String, "alice", alice.transcript)

        for (refused, reason) in [("pаypal", "may not mix letters or digits of different scripts"), ("evil\u{202E}gnp", "bidirectional"),
                                  ("zero\u{200B}width", "invisible or blank character")] {
            let client = try TestLAN.run("svc-connect", on: "b", [name, "--as", refused])
            XCTAssertEqual(client.waitForExit(), 64, client.transcript)
            XCTAssertTrue(client.stderr.first?.contains(reason) == true, client.transcript)
            XCTAssertFalse(client.stderr.joined().contains("\u{202E}"), "the refusal itself is printed escaped")
        }
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
        for member in [alice, fullwidth, capitals, precomposed] {
            member.signal(SIGTERM)
            _ = member.waitForExit()
        }
    }

    /// A raw peer: says HELLO with `name` (argv[3]), prints each frame it gets as JSON
    /// (`type`, `code` for ERROR, `name` for WELCOME), and once welcomed sends an ERROR frame
    /// whose text is argv[4].
    static let rawPeer = #"""
        import json, socket, struct, sys, time
        host, port, name, text = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4].encode()
        def frame(kind, payload): return struct.pack(">IHH", len(payload), kind, 0) + payload
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(frame(1, b"P2PM" + struct.pack(">HIH", 1, 1, len(name)) + name))
        data = b""
        while True:
            while len(data) < 8 or len(data) < 8 + struct.unpack(">I", data[:4])[0]:
                more = s.recv(65536)
                if not more: sys.exit(0)
                data += more
            length, kind, _ = struct.unpack(">IHH", data[:8])
            payload, data = data[8:8 + length], data[8 + length:]
            event = {"type": kind}
            if kind == 4: event["code"] = struct.unpack(">H", payload[:2])[0]
            if kind == 2: event["name"] = payload[2:].decode()
            print(json.dumps(event), flush=True)
            if kind == 2:
                s.sendall(frame(4, struct.pack(">H", 5) + text))
                time.sleep(0.5)
                sys.exit(0)
        """#

    /// Peer text that reaches the publisher's stderr (an ERROR frame's message) is escaped,
    /// and HELLO names with invisible or bidirectional characters get `ERROR invalid-name`.
    func testHostileTextInNotesIsEscapedAndHiddenCharactersInNamesAreRefused() throws {
        let name = TestLAN.uniqueName("notes")
        // --allow-plaintext: the raw peer speaks plaintext; the frame layer is the same inside TLS.
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--json", "--allow-plaintext"])
        let registered = try XCTUnwrap(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let port = String(try XCTUnwrap(registered["port"] as? Int))
        let host = try TestLAN.addresses(of: "a").ipv4

        let hostile = "\u{1B}]0;pwned\u{7}\u{202E}gnp.exe\u{9B}2J"
        let peer = try TestLAN.command(on: "b", ["/usr/bin/python3", "-c", Self.rawPeer, host, port, "mallory", hostile])
        XCTAssertEqual(peer.waitForExit(timeout: 20), 0, peer.transcript)
        XCTAssertEqual(peer.jsonEvents.first { $0["type"] as? Int == 2 }?["name"] as? String, "mallory", peer.transcript)
        let note = try XCTUnwrap(waitForStderr(publisher) { $0.contains("mallory reported") }, publisher.transcript)
        XCTAssertTrue(note.hasSuffix("\\u{1B}]0;pwned\\u{7}\\u{202E}gnp.exe\\u{9B}2J"), note)
        XCTAssertFalse(note.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" }, note)

        for refused in ["right\u{202E}left", "zero\u{200B}width", "\u{3164}", "mixеd"] {
            let peer = try TestLAN.command(on: "b", ["/usr/bin/python3", "-c", Self.rawPeer, host, port, refused, "unused"])
            _ = peer.waitForExit(timeout: 20)
            XCTAssertEqual(peer.jsonEvents.first { $0["type"] as? Int == 4 }?["code"] as? Int, 10, "\(refused.unicodeScalars.map { String($0.value, radix: 16) }): " + peer.transcript)
        }
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0, publisher.transcript)
    }
}
