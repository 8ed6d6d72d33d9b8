import CAvahiClient
@testable import DNSSD
import XCTest

/// The errors of resolves and address lookups, which go through Avahi's client library
/// (`DaemonClient`): its codes say what Avahi's dns_sd layer reported alike.
final class AvahiErrorTests: XCTestCase {
    let operation = "resolving 'Nope' of type _p2pipp._tcp in local."
    let bus = SystemBus.Status.reachable(address: "/run/dbus/x")

    func testTheNamesAreAvahis() {
        XCTAssertEqual(DNSSDError.avahiErrorNames[Int32(AVAHI_ERR_TIMEOUT)], "TIMEOUT")
        XCTAssertEqual(DNSSDError.avahiErrorNames[Int32(AVAHI_ERR_DISCONNECTED)], "DISCONNECTED")
        XCTAssertEqual(DNSSDError.avahiErrorNames[Int32(AVAHI_ERR_NO_DAEMON)], "NO_DAEMON")
        XCTAssertEqual(DNSSDError.avahiErrorNames[Int32(AVAHI_ERR_NO_CHANGE)], "NO_CHANGE")
        XCTAssertEqual(Set(DNSSDError.avahiErrorNames.keys), Set(Int32(AVAHI_ERR_MAX + 1)...Int32(AVAHI_ERR_FAILURE)))
    }

    /// The daemon's resolvers give up after 5 s (`Int32(AVAHI_ERR_TIMEOUT)`): a name nobody answered
    /// for, not a stopped daemon (Avahi's dns_sd layer said kDNSServiceErr_Unknown for both).
    func testTheResolversOwnTimeoutIsNoSuchName() {
        let error = DNSSDError.daemon(DaemonFailure(stage: .running, code: Int32(AVAHI_ERR_TIMEOUT), bus: nil), while: operation)
        XCTAssertEqual(error.code, .noSuchName)
        XCTAssertFalse(error.isDaemonUnavailable)
        XCTAssertTrue(error.message.hasPrefix("nothing on the network answered while \(operation): avahi-daemon runs and gave up after its own 5 s limit (AVAHI_ERR_TIMEOUT, -15)"), error.message)
        XCTAssertFalse(error.message.contains("not running"), error.message)
        XCTAssertEqual(error.rawValue, -15)
        XCTAssertEqual(AvahiDaemon.resolverLimit, .seconds(5))
    }

    /// The daemon went away under a running lookup (a restart): said so, with what to do, and
    /// not "not running" nor to install anything.
    func testADaemonThatGoesAwayMidwaySaysItStopped() {
        for stage in [DaemonFailure.Stage.running, .starting] {
            let error = DNSSDError.daemon(DaemonFailure(stage: stage, code: Int32(AVAHI_ERR_DISCONNECTED), bus: bus), while: operation)
            XCTAssertEqual(error.code, .daemonUnreachable)
            XCTAssertTrue(error.isDaemonUnavailable)
            XCTAssertTrue(error.message.hasPrefix("avahi-daemon stopped while \(operation) (AVAHI_ERR_DISCONNECTED, -23): it was stopped, or is restarting. Try again once it runs"), error.message)
            XCTAssertTrue(error.message.contains("service avahi-daemon start"), error.message)
            XCTAssertFalse(error.message.contains("not running") || error.message.contains("install"), error.message)
        }
        let bus = DNSSDError.daemon(DaemonFailure(stage: .running, code: Int32(AVAHI_ERR_DISCONNECTED),
                                                  bus: .unreachable(address: "/run/dbus/x", reason: "Connection refused")), while: operation)
        XCTAssertEqual(bus.code, .busUnreachable)
        XCTAssertTrue(bus.message.hasPrefix("the D-Bus system bus at /run/dbus/x stopped while \(operation)"), bus.message)
    }

    func testNoDaemonAtAllSaysNotRunning() {
        let error = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_NO_DAEMON), bus: bus), while: operation)
        XCTAssertEqual(error.code, .daemonUnreachable)
        XCTAssertTrue(error.message.hasPrefix("avahi-daemon is not running: the D-Bus system bus at /run/dbus/x is up"), error.message)
        XCTAssertTrue(error.message.contains("service avahi-daemon start"), error.message)
    }

    func testNoBusSaysToStartDBus() {
        let error = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_DBUS_ERROR),
                                                    bus: .unreachable(address: "/nonexistent/bus.sock", reason: "No such file or directory")), while: operation)
        XCTAssertEqual(error.code, .busUnreachable)
        XCTAssertTrue(error.message.hasPrefix("cannot reach the D-Bus system bus at /nonexistent/bus.sock: No such file or directory"), error.message)
        XCTAssertTrue(error.message.contains("service dbus start"), error.message)
        let files = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_DBUS_ERROR),
                                                    bus: .outOfFileDescriptors(reason: "Too many open files")), while: operation)
        XCTAssertTrue(files.message.hasPrefix("too many open files (Too many open files) while \(operation)"), files.message)
        XCTAssertFalse(files.isDaemonUnavailable)
    }

    /// The bus's refusal of one more connection (D-Bus LimitsExceeded) is "Too many objects" in
    /// Avahi's words: named as the bus's limit, not a policy or a stopped daemon.
    func testAFullBusNamesTheConnectionLimit() {
        let error = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_TOO_MANY_OBJECTS), bus: bus), while: operation)
        XCTAssertEqual(error.code, .refused)
        XCTAssertTrue(error.message.hasPrefix("avahi-daemon could not be asked over the D-Bus system bus at /run/dbus/x: Too many objects, so \(operation) failed (AVAHI_ERR_TOO_MANY_OBJECTS, -17)"), error.message)
        XCTAssertTrue(error.message.contains("max_connections_per_user"), error.message)
        XCTAssertFalse(error.message.contains("not running") || error.message.contains("policy"), error.message)
        let dbus = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_DBUS_ERROR), bus: bus), while: operation)
        XCTAssertEqual(dbus.code, .daemonUnreachable)
        XCTAssertTrue(dbus.message.hasPrefix("avahi-daemon could not be asked over the D-Bus system bus at /run/dbus/x: An unexpected D-Bus error occurred"), dbus.message)
    }

    /// Past the connection, too many objects is the daemon's limit per client.
    func testTooManyLookupsNamesTheDaemonsLimit() {
        let error = DNSSDError.daemon(DaemonFailure(stage: .starting, code: Int32(AVAHI_ERR_TOO_MANY_OBJECTS), bus: nil), while: operation)
        XCTAssertEqual(error.code, .refused)
        XCTAssertTrue(error.message.contains("objects-per-client-max"), error.message)
    }

    func testEveryOtherCodeMapsToAnExplainedError() {
        let expected: [Int32: DNSSDError.Code] = [
            Int32(AVAHI_ERR_INVALID_SERVICE_NAME): .badParameter, Int32(AVAHI_ERR_INVALID_SERVICE_TYPE): .badParameter,
            Int32(AVAHI_ERR_INVALID_DOMAIN_NAME): .badParameter, Int32(AVAHI_ERR_INVALID_HOST_NAME): .badParameter,
            Int32(AVAHI_ERR_INVALID_INTERFACE): .badParameter, Int32(AVAHI_ERR_NO_MEMORY): .noMemory, Int32(AVAHI_ERR_ACCESS_DENIED): .refused,
            Int32(AVAHI_ERR_NOT_FOUND): .noSuchName, Int32(AVAHI_ERR_BAD_STATE): .daemonUnreachable, Int32(AVAHI_ERR_FAILURE): .other,
            Int32(AVAHI_ERR_NO_NETWORK): .other,
        ]
        for (raw, code) in expected {
            let error = DNSSDError.daemon(DaemonFailure(stage: .running, code: raw, bus: bus), while: operation)
            XCTAssertEqual(error.code, code, "\(raw)")
            XCTAssertTrue(error.message.contains(operation), error.message)
            XCTAssertTrue(error.message.contains("(AVAHI_ERR_\(DNSSDError.avahiErrorNames[raw]!), \(raw))"), error.message)
            XCTAssertEqual(error.rawValue, raw)
        }
        XCTAssertTrue(DNSSDError.daemon(DaemonFailure(stage: .running, code: -99, bus: nil), while: "x").message.contains("(Avahi error, -99)"))
    }
}

/// What the resolver and record browser callbacks copy out: values from the network, by way
/// of the daemon.
final class DaemonReportTests: XCTestCase {
    /// The string list a resolver callback gets for a record whose items are `items` on the
    /// wire: libavahi-client prepends each item of the daemon's D-Bus signal as it arrives
    /// (`avahi_string_list_add_arbitrary`, empty ones skipped), and the daemon sends them last
    /// first (see `txtWireBytes`).
    func list(_ items: [[UInt8]]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        for item in items.reversed() where !item.isEmpty { list = avahi_string_list_add_arbitrary(list, item, item.count) }
        return list
    }

    /// The wire form has the items in the record's order (not last first, as Avahi's dns_sd
    /// layer gave them) behind their length bytes, bytes kept as they are.
    func testTXTBytesKeepTheItemsInTheRecordsOrderAndAsReceived() {
        let items: [[UInt8]] = [Array("key=value".utf8), Array("flag".utf8), Array("=leading".utf8), Array("k=".utf8),
                                [0, 1, 0x3D, 0xFF, 0], Array("Ünïcode=✓".utf8)]
        let txt = list(items)
        defer { avahi_string_list_free(txt) }
        XCTAssertEqual(txtWireBytes(txt, limit: ResolverReport.maximumTXTBytes), items.flatMap { [UInt8($0.count)] + $0 })
        XCTAssertEqual(txtWireBytes(txt, limit: ResolverReport.maximumTXTBytes), txtWireBytes(txt, limit: ResolverReport.maximumTXTBytes),
                       "serializing leaves the list as it was")
    }

    /// No TXT items (or only empty ones) is one empty string, as RFC 6763 §6.1 has it and as
    /// the dns_sd layer gave it.
    func testAnEmptyTXTIsOneZeroByte() {
        XCTAssertEqual(txtWireBytes(nil, limit: 65_535), [0])
        let empty = list([[], []])
        XCTAssertNil(empty)
        XCTAssertEqual(txtWireBytes(empty, limit: 65_535), [0])
    }

    func testTXTItemsLongerThan255BytesAreCutAndTooLongARecordIsRefused() {
        let long = [UInt8](repeating: 0x61, count: 300)
        let txt = list([long, Array("b".utf8)])
        defer { avahi_string_list_free(txt) }
        XCTAssertEqual(txtWireBytes(txt, limit: 65_535), [255] + long.prefix(255) + [1, 0x62])
        XCTAssertNil(txtWireBytes(txt, limit: 257))
        XCTAssertEqual(txtWireBytes(txt, limit: 258)?.count, 258)
    }

    func testAFoundServiceIsCopiedWithAHostTargetEndingInADot() {
        let txt = list([Array("a=b".utf8)])
        defer { avahi_string_list_free(txt) }
        for (host, target) in [("printer.local", "printer.local."), ("printer.local.", "printer.local."), ("", "")] {
            let report = host.withCString {
                ResolverReport(event: AVAHI_RESOLVER_FOUND, hostName: $0, port: 4242, txt: txt, interface: 3) { XCTFail("no error read"); return 0 }
            }
            XCTAssertEqual(report, .found(hostTarget: target, port: 4242, interfaceIndex: 3, txt: [3] + Array("a=b".utf8)))
        }
    }

    func testHostileValuesAreRefusedNotGuessedAt() {
        let unterminated = [CChar](repeating: 0x61, count: Int(AVAHI_DOMAIN_NAME_MAX) + 10)
        let long = unterminated.withUnsafeBufferPointer {
            ResolverReport(event: AVAHI_RESOLVER_FOUND, hostName: $0.baseAddress, port: 1, txt: nil, interface: 2) { 0 }
        }
        XCTAssertEqual(long, .unusable("a host name longer than 1014 bytes"))
        for interface in [AvahiIfIndex(-1), 0] {
            let report = ResolverReport(event: AVAHI_RESOLVER_FOUND, hostName: "h", port: 1, txt: nil, interface: interface) { 0 }
            XCTAssertEqual(report, .unusable("interface index \(interface)"))
        }
        XCTAssertEqual(ResolverReport(event: AVAHI_RESOLVER_FOUND, hostName: nil, port: 1, txt: nil, interface: 2) { 0 },
                       .unusable("no host name"))
    }

    func testAFailureCarriesTheClientsError() {
        let report = ResolverReport(event: AVAHI_RESOLVER_FAILURE, hostName: nil, port: 0, txt: nil, interface: -1) { Int32(AVAHI_ERR_TIMEOUT) }
        XCTAssertEqual(report, .failed(DaemonFailure(stage: .running, code: Int32(AVAHI_ERR_TIMEOUT), bus: nil)))
        XCTAssertEqual(RecordReport(event: AVAHI_BROWSER_FAILURE, interface: -1, rdata: nil, size: 0) { Int32(AVAHI_ERR_DISCONNECTED) },
                       .failed(DaemonFailure(stage: .running, code: Int32(AVAHI_ERR_DISCONNECTED), bus: nil)))
    }

    func testOnlyAddressesOnARealInterfaceAreTaken() {
        let v4: [UInt8] = [10, 77, 0, 1]
        let v6 = [UInt8](repeating: 0xFE, count: 16)
        func report(_ event: AvahiBrowserEvent, _ bytes: [UInt8], interface: AvahiIfIndex = 2) -> RecordReport? {
            bytes.withUnsafeBytes { RecordReport(event: event, interface: interface, rdata: $0.baseAddress, size: $0.count) { XCTFail("no error read"); return 0 } }
        }
        XCTAssertEqual(report(AVAHI_BROWSER_NEW, v4), .added(interfaceIndex: 2, rdata: v4))
        XCTAssertEqual(report(AVAHI_BROWSER_NEW, v6), .added(interfaceIndex: 2, rdata: v6))
        XCTAssertNil(report(AVAHI_BROWSER_NEW, v4 + [0]), "not an address")
        XCTAssertNil(report(AVAHI_BROWSER_NEW, []))
        XCTAssertNil(report(AVAHI_BROWSER_NEW, v4, interface: -1))
        XCTAssertNil(report(AVAHI_BROWSER_REMOVE, v4))
        XCTAssertNil(report(AVAHI_BROWSER_ALL_FOR_NOW, []))
        XCTAssertNil(report(AVAHI_BROWSER_CACHE_EXHAUSTED, []))
    }

    func testInterfaceIndexesAreTakenOnlyWhenAvahiCanTakeThem() {
        XCTAssertEqual(AvahiIfIndex(lookingUpOn: 0), AvahiIfIndex(AVAHI_IF_UNSPEC))
        XCTAssertEqual(AvahiIfIndex(lookingUpOn: 7), 7)
        XCTAssertNil(AvahiIfIndex(lookingUpOn: UInt32.max), "dns_sd's LocalOnly, which Avahi does not have")
    }
}
