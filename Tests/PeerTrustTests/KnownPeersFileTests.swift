import DiscoveryCore
import Foundation
import PeerTrust
import TransportCore
import XCTest

final class KnownPeersFileTests: XCTestCase {
    let keyA = PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")!
    let keyB = PublicKeyFingerprint("SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")!
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "known-peers-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func instance(_ name: String) -> ServiceInstance { ServiceInstance(name: name, type: .p2pipp, domain: .local) }
    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testDefaultPath() throws {
        XCTAssertEqual(try KnownPeersFile.defaultPath(environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"]), "/c/svc/known_peers")
        XCTAssertEqual(try KnownPeersFile.defaultPath(environment: ["HOME": "/h"]), "/h/.config/svc/known_peers")
        XCTAssertEqual(try KnownPeersFile.defaultPath(environment: ["HOME": "/h/"]), "/h/.config/svc/known_peers")
        XCTAssertEqual(try KnownPeersFile.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]), "/h/.config/svc/known_peers",
                       "a relative XDG_CONFIG_HOME is ignored, as the XDG spec says")
        XCTAssertEqual(try KnownPeersFile.defaultPath(environment: ["XDG_CONFIG_HOME": "", "HOME": "/h"]), "/h/.config/svc/known_peers")
        XCTAssertThrowsError(try KnownPeersFile.defaultPath(environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("set HOME"), "\(error)")
        }
    }

    func testANameTheReaderWouldSkipIsNotPinned() throws {
        let file = KnownPeersFile(path: directory + "/known_peers")
        try file.pin(keyA, for: instance("Kitchen"))
        for odd in ["Office\u{200B}", "\u{FEFF}Office"] {
            XCTAssertThrowsError(try file.pin(keyB, for: instance(odd)), odd)
        }
        let peers = try file.load()
        XCTAssertEqual(peers.warnings, [], "nothing was written that would stop later first contacts")
        XCTAssertEqual(peers.pins.count, 1)
    }

    func testAMissingFileHasNoPinsAndPinningCreatesTheDirectory0700AndTheFile0600() throws {
        let path = directory + "/config/svc/known_peers"
        let file = KnownPeersFile(path: path)
        XCTAssertEqual(try file.load().pins, [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/config"))
        let pin = try file.pin(keyA, for: instance("Living room"))
        XCTAssertEqual(pin.lineNumber, 1)
        XCTAssertEqual(try mode(directory + "/config/svc"), 0o700)
        XCTAssertEqual(try mode(directory + "/config"), 0o700)
        XCTAssertEqual(try mode(path), 0o600)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "Living\\032room._p2pipp._tcp.local. \(keyA.full)\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/config/svc"), ["known_peers"], "no temporary file is left")
        XCTAssertEqual(try file.load().pin(for: instance("Living room")), pin)
    }

    func testWritingReplacesTheFileAtomicallyAndKeepsComments() throws {
        let path = directory + "/known_peers"
        let original = "# my rooms\n\nb._p2pipp._tcp.local. \(keyA.full)\nbroken line here\n"
        try original.write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(path, 0o644), 0)
        var before = stat()
        XCTAssertEqual(stat(path, &before), 0)
        let file = KnownPeersFile(path: path)
        XCTAssertEqual(try file.pin(keyB, for: instance("c")).lineNumber, 5)
        var after = stat()
        XCTAssertEqual(stat(path, &after), 0)
        XCTAssertNotEqual(before.st_ino, after.st_ino, "a new file was renamed into place, the old one not rewritten")
        XCTAssertEqual(try mode(path), 0o600)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), original + "c._p2pipp._tcp.local. \(keyB.full)\n")
        var peers = try file.load()
        XCTAssertEqual(peers.forget(instance("b")).map(\.lineNumber), [3])
        try file.save(peers)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "# my rooms\n\nbroken line here\nc._p2pipp._tcp.local. \(keyB.full)\n")
    }

    func testAFileWithLinesItCannotKeepIsNotWrittenBack() throws {
        let path = directory + "/known_peers"
        let original = String(repeating: "#", count: 2_000) + "\nb._p2pipp._tcp.local. \(keyA.full)\n"
        try original.write(toFile: path, atomically: false, encoding: .utf8)
        let file = KnownPeersFile(path: path)
        XCTAssertEqual(try file.load().pin(for: instance("b"))?.lineNumber, 2, "still read")
        var peers = try file.load()
        peers.forget(instance("b"))
        XCTAssertThrowsError(try file.save(peers)) { error in
            XCTAssertEqual("\(error)", "cannot rewrite '\(path)': line 1 is longer than 1024 bytes, and writing it back would lose what was not read; shorten it by hand (each line '<service> <key>')")
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), original, "unchanged")
    }

    func testReadingStopsAtTheByteLimit() throws {
        let path = directory + "/known_peers"
        // One line far longer than everything svc reads.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: FileManager.default.createFile(atPath: path, contents: nil) ? path : ""))
        handle.write(Data("a._p2pipp._tcp.local. \(keyA.full)\n".utf8))
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<12 { handle.write(chunk) }
        handle.write(Data("\nb._p2pipp._tcp.local. \(keyA.full)\n".utf8))
        try handle.close()
        let peers = try KnownPeersFile(path: path).load()
        XCTAssertEqual(peers.pins.map(\.lineNumber), [1])
        XCTAssertNotNil(peers.incompleteness)
    }

    func testSomethingElseThanAFileIsRefused() throws {
        let path = directory + "/known_peers"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        XCTAssertThrowsError(try KnownPeersFile(path: path).load()) { error in
            XCTAssertEqual("\(error)", "'\(path)' is not a regular file; move it away to start with no pins")
        }
        let fifo = directory + "/fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertThrowsError(try KnownPeersFile(path: fifo).load(), "refused at once, not waited on") { error in
            XCTAssertEqual("\(error)", "'\(fifo)' is not a regular file; move it away to start with no pins")
        }
    }

    func testAnUnwritableDirectorySaysWhatToDo() throws {
        let path = directory + "/not-a-directory/known_peers"
        try "".write(toFile: directory + "/not-a-directory", atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try KnownPeersFile(path: path).pin(keyA, for: instance("a"))) { error in
            XCTAssertTrue("\(error)".contains("Not a directory (errno 20)"), "\(error)")
            XCTAssertEqual((error as? PeerTrustError)?.errno, ENOTDIR)
        }
    }
}
