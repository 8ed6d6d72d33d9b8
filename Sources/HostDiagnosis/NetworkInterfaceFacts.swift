import TransportCore

/// What was seen of one network interface: its flags and addresses (getifaddrs) and what
/// /sys/class/net says about its kind.
public struct NetworkInterfaceFacts: Sendable, Hashable {
    public var name: String
    public var isUp = false
    public var isMulticast = false
    public var isLoopback = false
    public var isPointToPoint = false
    public var addresses: [IPAddress] = []
    /// `/sys/class/net/NAME/type`: the ARPHRD number (1 Ethernet, 772 loopback, 65534 none).
    public var linkType: Int?
    /// `DEVTYPE=` from `/sys/class/net/NAME/uevent`, e.g. `bridge`, `wireguard`, `vlan`.
    public var deviceType: String?
    /// `/sys/class/net/NAME/bridge` exists: the interface is a bridge.
    public var isBridge = false
    /// `/sys/class/net/NAME/master` exists: the interface is a port of a bridge (or a bond).
    public var hasMaster = false
    /// `/sys/class/net/NAME/tun_flags` exists: a tun or tap device.
    public var isTunTap = false

    public init(name: String) { self.name = name }

    public var hasIPv4: Bool { addresses.contains { $0.family == .ipv4 } }
    public var hasIPv6: Bool { addresses.contains { $0.family == .ipv6 } }
}

/// What an interface is, as far as mDNS cares.
public enum InterfaceKind: String, Sendable, Hashable {
    case loopback
    /// An ordinary link (Ethernet, Wi-Fi, or a namespace's veth with an address).
    case lan
    /// A container network: docker*, br-* (Docker networks), podman*, cni*, or a veth that is
    /// the host side of a container (a port of a bridge).
    case container
    /// A virtual machine network: virbr*, vmnet*, vboxnet*.
    case virtualMachine
    /// A bridge of unknown purpose.
    case bridge
    /// A VPN or tunnel: tun*, tap*, wg*, tailscale*, zt*, ppp*, or by type (tun/tap flags,
    /// DEVTYPE=wireguard, ARPHRD_NONE, point-to-point).
    case vpn

    /// Whether mDNS on this interface reaches another network than the LAN the user means.
    public var isFlagged: Bool { self != .lan && self != .loopback }

    /// Classifies an interface by name first, then by what /sys/class/net says.
    public init(_ facts: NetworkInterfaceFacts) {
        let name = facts.name
        func starts(_ prefixes: String...) -> Bool { prefixes.contains { name.hasPrefix($0) } }
        if facts.isLoopback || facts.linkType == 772 {
            self = .loopback
        } else if starts("docker", "br-", "podman", "cni", "flannel", "cali", "lxcbr", "lxdbr") || (starts("veth") && facts.hasMaster) {
            self = .container
        } else if starts("virbr", "vmnet", "vboxnet") {
            self = .virtualMachine
        } else if starts("tun", "tap", "wg", "tailscale", "zt", "ppp", "ipsec", "nordlynx") || facts.isTunTap
                    || facts.deviceType == "wireguard" || facts.linkType == 65534 || facts.isPointToPoint {
            self = .vpn
        } else if facts.isBridge || facts.deviceType == "bridge" {
            self = .bridge
        } else {
            self = .lan
        }
    }

    /// How the kind is named in the doctor's output.
    public var label: String {
        switch self {
        case .loopback: "loopback"
        case .lan: "LAN"
        case .container: "container network"
        case .virtualMachine: "virtual machine network"
        case .bridge: "bridge"
        case .vpn: "VPN or tunnel"
        }
    }
}
