import Foundation
import Glibc
import XCTest

/// A system bus that refuses more connections (D-Bus allows 256 per user): avahi-daemon runs,
/// but nothing can ask it. Avahi's client library calls the bus's refusal "Too many objects",
/// and its dns_sd layer makes that kDNSServiceErr_Refused: the tools had blamed the daemon's
/// configuration, svc-doctor had said to restart the daemon.
extension DoctorTests {
    func testAFullBusIsNamedAsSuchNotAsTheDaemon() throws {
        let bus = try XCTUnwrap(TestLAN.settings(of: "b", lan: lan)["BUS"])
        let path = try XCTUnwrap(bus.components(separatedBy: "path=").last?.components(separatedBy: ",").first)
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        // Until the bus refuses one more (the daemon and the bus's own already hold some).
        while held.count < 1024, let connection = try BusConnection.open(path) { held.append(connection) }
        XCTAssertGreaterThan(held.count, 200, "the bus took \(held.count) connections")

        let connect = try TestLAN.run("svc-connect", on: "b", lan: lan, ["anyone", "--timeout", "3", "--message", "hi"])
        XCTAssertEqual(connect.waitForExit(timeout: 20), 69, connect.transcript)
        let message = connect.stderr.joined(separator: "\n")
        XCTAssertTrue(message.contains("avahi-daemon could not be asked over the D-Bus system bus at \(path): Too many objects"), message)
        XCTAssertTrue(message.contains("max_connections_per_user"), message)
        XCTAssertFalse(message.contains("not running") || message.contains("policy"), message)

        let report = try diagnose("b")
        XCTAssertEqual(report.status(of: "avahi-daemon"), "problem", report.transcript)
        XCTAssertEqual(report.summary(of: "avahi-daemon"), "the system bus refuses more connections from this user, so avahi-daemon (running) cannot be asked", report.transcript)
        XCTAssertFalse(report.fixes(of: "avahi-daemon").contains("sudo systemctl restart avahi-daemon"), report.transcript)
    }
}

/// One authenticated connection to a D-Bus bus (EXTERNAL auth, then Hello), held open.
private enum BusConnection {
    /// The connected socket, or nil once the bus refuses the Hello (its connection limit).
    static func open(_ path: String) throws -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connected == 0, send(fd, Array("\0AUTH EXTERNAL \(hexUID)\r\n".utf8)), receive(fd).starts(with: Array("OK".utf8)),
              send(fd, Array("BEGIN\r\n".utf8) + hello) else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        // A method return (type 2) welcomes us; an error (type 3) is the limit.
        let reply = receive(fd)
        guard reply.count > 1, reply[1] == 2 else {
            close(fd)
            return nil
        }
        return fd
    }

    private static var hexUID: String { String(getuid()).utf8.map { String(format: "%02x", $0) }.joined() }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    private static func receive(_ fd: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer.prefix(count)) : []
    }

    /// org.freedesktop.DBus.Hello, little-endian, serial 1, no body.
    private static let hello: [UInt8] = {
        func padded(_ bytes: [UInt8], to alignment: Int) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (alignment - bytes.count % alignment) % alignment) }
        func uint32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian) { Array($0) } }
        var fields: [UInt8] = []
        for (code, signature, value) in [(UInt8(1), "o", "/org/freedesktop/DBus"), (2, "s", "org.freedesktop.DBus"),
                                         (3, "s", "Hello"), (6, "s", "org.freedesktop.DBus")] {
            fields = padded(fields, to: 8)
            let field = padded([code, 1] + Array(signature.utf8) + [0], to: 4) + uint32(value.utf8.count) + Array(value.utf8) + [0]
            fields += field
        }
        return padded(Array("l".utf8) + [1, 0, 1] + uint32(0) + uint32(1) + uint32(fields.count) + fields, to: 8)
    }()
}
