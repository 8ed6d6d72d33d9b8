@testable import DNSSD
import Glibc
import XCTest

final class DNSSDErrorTests: XCTestCase {
    func testUnknownWithoutABusSaysToStartDBus() {
        let error = DNSSDError.daemon(-65537, while: "browsing", bus: .unreachable(address: "/run/dbus/x", reason: "No such file or directory"))
        XCTAssertEqual(error.code, .busUnreachable)
        XCTAssertTrue(error.isDaemonUnavailable)
        XCTAssertTrue(error.message.contains("/run/dbus/x"))
        XCTAssertTrue(error.message.contains("service dbus start"))
        XCTAssertTrue(error.message.contains("DBUS_SYSTEM_BUS_ADDRESS"))
        XCTAssertFalse(error.message.contains("-65537"), "the raw code is kept in rawValue, not shown")
        XCTAssertEqual(error.rawValue, -65537)
    }

    func testUnknownWithABusSaysAvahiIsNotRunning() {
        let error = DNSSDError.daemon(-65537, while: "browsing", bus: .reachable(address: "/run/dbus/x"))
        XCTAssertEqual(error.code, .daemonUnreachable)
        XCTAssertTrue(error.message.contains("avahi-daemon is not running"))
        XCTAssertTrue(error.message.contains("service avahi-daemon start"))
        XCTAssertTrue(error.message.contains("browsing"))
    }

    /// Out of file descriptors is not a stopped daemon: the message says so and what to do.
    func testUnknownWithoutFileDescriptorsSaysTooManyOpenFiles() {
        let error = DNSSDError.daemon(-65537, while: "resolving 'x'", bus: .outOfFileDescriptors(reason: "Too many open files"))
        XCTAssertFalse(error.isDaemonUnavailable)
        XCTAssertTrue(error.message.hasPrefix("too many open files (Too many open files) while resolving 'x'"), error.message)
        XCTAssertTrue(error.message.contains("ulimit -n"))
        XCTAssertFalse(error.message.contains("not running"))
    }

    /// A running publisher or browser that loses the daemon is most often seeing a restart:
    /// it says so, and does not tell the user to install anything.
    func testLosingTheDaemonReadsAsARestart() {
        let daemon = DNSSDError.daemon(-65537, while: "browsing", bus: .reachable(address: "/run/dbus/x"))
        XCTAssertEqual(daemon.lostMessage, "avahi-daemon stopped answering: it is restarting, or was stopped")
        let bus = DNSSDError.daemon(-65537, while: "browsing", bus: .unreachable(address: "/run/dbus/x", reason: "No such file or directory"))
        XCTAssertTrue(bus.lostMessage.hasPrefix("the D-Bus system bus stopped answering: it is restarting, or was stopped"), bus.lostMessage)
        for error in [daemon, bus] { XCTAssertFalse(error.lostMessage.contains("install"), error.lostMessage) }
        let other = DNSSDError.daemon(-65548, while: "registering", bus: .reachable(address: "b"))
        XCTAssertEqual(other.lostMessage, other.message)
    }

    func testEveryKnownCodeMapsToAnExplainedError() {
        let expected: [Int32: DNSSDError.Code] = [
            -65548: .nameConflict, -65538: .noSuchName, -65554: .noSuchName, -65540: .badParameter,
            -65552: .badParameter, -65549: .badParameter, -65544: .unsupported, -65553: .refused,
            -65539: .noMemory, -65541: .internalError, -65542: .internalError, -65543: .internalError,
        ]
        for (raw, code) in expected {
            let error = DNSSDError.daemon(raw, while: "resolving 'x'", bus: .reachable(address: "b"))
            XCTAssertEqual(error.code, code, "\(raw)")
            XCTAssertTrue(error.message.contains("resolving 'x'"), error.message)
            XCTAssertTrue(error.message.contains("kDNSServiceErr_\(DNSSDError.errorNames[raw]!)"), error.message)
            XCTAssertFalse(error.isDaemonUnavailable)
        }
        XCTAssertEqual(DNSSDError.daemon(-65559, while: "x", bus: .reachable(address: "b")).code, .other)
        XCTAssertEqual(DNSSDError.daemon(-1, while: "x", bus: .reachable(address: "b")).code, .other)
    }

    func testTimeoutMessageNamesTheWait() {
        let error = DNSSDError.timedOut("registering 'x'", after: .milliseconds(2500))
        XCTAssertEqual(error.code, .timedOut)
        XCTAssertTrue(error.message.contains("2.5 s"), error.message)
    }
}

final class SystemBusTests: XCTestCase {
    override func tearDown() { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }

    func testSocketPathComesFromTheEnvironment() {
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS")
        XCTAssertEqual(SystemBus.socketPath, "/run/dbus/system_bus_socket")
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/tmp/a/bus.sock", 1)
        XCTAssertEqual(SystemBus.socketPath, "/tmp/a/bus.sock")
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "tcp:host=x;unix:guid=1,path=/tmp/b", 1)
        XCTAssertEqual(SystemBus.socketPath, "/tmp/b")
    }

    func testProbeTellsAListeningSocketFromAMissingOne() throws {
        let path = "/tmp/svc-bus-test-\(getpid()).sock"
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(path)", 1)
        guard case .unreachable(let address, let reason) = SystemBus.probe() else { return XCTFail("nothing listens yet") }
        XCTAssertEqual(address, path)
        XCTAssertEqual(reason, "No such file or directory")

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd); unlink(path) }
        var address2 = sockaddr_un()
        address2.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address2.sun_path) { $0.copyBytes(from: path.utf8) }
        let bound = withUnsafePointer(to: &address2) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 1), 0)
        XCTAssertEqual(SystemBus.probe(), .reachable(address: path))
    }
}
