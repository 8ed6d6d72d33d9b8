import HostDiagnosis
import TransportCore
import XCTest

final class InterfaceTests: XCTestCase {
    func interface(_ name: String, up: Bool = true, multicast: Bool = true, addresses: [[UInt8]] = [[10, 0, 0, 2]],
                   configure: (inout NetworkInterfaceFacts) -> Void = { _ in }) -> NetworkInterfaceFacts {
        var facts = NetworkInterfaceFacts(name: name)
        facts.isUp = up
        facts.isMulticast = multicast
        facts.addresses = addresses.compactMap { IPAddress(bytes: $0) }
        facts.linkType = 1
        configure(&facts)
        return facts
    }

    func testKindsByNameAndSysfs() {
        XCTAssertEqual(InterfaceKind(interface("lo") { $0.isLoopback = true }), .loopback)
        XCTAssertEqual(InterfaceKind(interface("eth0")), .lan)
        XCTAssertEqual(InterfaceKind(interface("veth0")), .lan, "a veth with an address and no bridge is a namespace's link")
        XCTAssertEqual(InterfaceKind(interface("veth12ab") { $0.hasMaster = true }), .container)
        XCTAssertEqual(InterfaceKind(interface("docker0") { $0.isBridge = true }), .container)
        XCTAssertEqual(InterfaceKind(interface("br-3f2a")), .container)
        XCTAssertEqual(InterfaceKind(interface("virbr0")), .virtualMachine)
        XCTAssertEqual(InterfaceKind(interface("wg0")), .vpn)
        XCTAssertEqual(InterfaceKind(interface("corp") { $0.deviceType = "wireguard" }), .vpn)
        XCTAssertEqual(InterfaceKind(interface("office") { $0.isTunTap = true }), .vpn)
        XCTAssertEqual(InterfaceKind(interface("x") { $0.linkType = 65534 }), .vpn)
        XCTAssertEqual(InterfaceKind(interface("br0") { $0.isBridge = true }), .bridge)
    }

    func testAvahiUseFollowsFlagsAndConfig() {
        let config = AvahiConfig(parsing: "[server]\ndeny-interfaces=eth1\nuse-ipv6=no\n")
        XCTAssertEqual(InterfaceUse(interface("eth0"), config: config), .used)
        XCTAssertEqual(InterfaceUse(interface("eth0", up: false), config: config), .down)
        XCTAssertEqual(InterfaceUse(interface("eth0", multicast: false), config: config), .noMulticast)
        XCTAssertEqual(InterfaceUse(interface("eth1"), config: config), .excludedByConfig)
        XCTAssertEqual(InterfaceUse(interface("eth0", addresses: []), config: config), .noAddress)
        XCTAssertEqual(InterfaceUse(interface("eth0", addresses: [[0xFE, 0x80] + Array(repeating: 0, count: 13) + [1]]), config: config), .noEnabledProtocol)
        XCTAssertEqual(InterfaceUse(interface("ppp0") { $0.isPointToPoint = true }, config: config), .pointToPoint)
    }

    func testHealthyAndFlagged() {
        let lo = interface("lo", addresses: [[127, 0, 0, 1]]) { $0.isLoopback = true }
        let ok = Finding.interfaces([lo, interface("eth0")], config: AvahiConfig(), configPath: "/c")
        XCTAssertEqual(ok.status, .ok)
        XCTAssertEqual(ok.summary, "Avahi uses eth0")
        XCTAssertEqual(ok.observed, ["eth0: LAN, up, multicast 10.0.0.2: Avahi uses it"])

        let docker = Finding.interfaces([interface("eth0"), interface("docker0", addresses: [[172, 17, 0, 1]]) { $0.isBridge = true }],
                                        config: AvahiConfig(parsing: "[server]\ndeny-interfaces=tun9\n"), configPath: "/c")
        XCTAssertEqual(docker.status, .warning)
        XCTAssertEqual(docker.fixes, ["deny-interfaces=tun9,docker0 in [server] of /c", "sudo systemctl restart avahi-daemon"])
    }

    func testNoUsableInterfaceIsAProblem() {
        let noMulticast = Finding.interfaces([interface("veth0", multicast: false)], config: AvahiConfig(), configPath: "/c")
        XCTAssertEqual(noMulticast.status, .problem)
        XCTAssertEqual(noMulticast.fixes, ["sudo ip link set veth0 multicast on"])
        XCTAssertTrue(noMulticast.observed[0].hasSuffix("no MULTICAST flag: Avahi ignores it"))

        let excluded = Finding.interfaces([interface("eth0")], config: AvahiConfig(parsing: "[server]\nallow-interfaces=eth9\n"), configPath: "/c")
        XCTAssertEqual(excluded.status, .problem)
        XCTAssertTrue(excluded.fixes[0].hasPrefix("allow-interfaces=eth0 in [server] of /c"))

        XCTAssertEqual(Finding.interfaces([], config: AvahiConfig(), configPath: "/c").fixes,
                       ["connect this host to a network: no interface is up with an address"])

        let partly = Finding.interfaces([interface("eth0"), interface("eth1", multicast: false)], config: AvahiConfig(), configPath: "/c")
        XCTAssertEqual(partly.status, .warning)
        XCTAssertEqual(partly.fixes, ["sudo ip link set eth1 multicast on"])
    }
}
