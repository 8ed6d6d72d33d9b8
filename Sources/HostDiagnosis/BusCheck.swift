/// What was seen of the D-Bus system bus, through which every client reaches avahi-daemon.
public struct BusFacts: Sendable, Hashable {
    /// The socket path tried.
    public var path: String
    /// `DBUS_SYSTEM_BUS_ADDRESS` when set (then `path` comes from it).
    public var environmentAddress: String?
    /// Why connecting failed, or nil when the bus accepted the connection.
    public var connectError: String?

    public init(path: String, environmentAddress: String?, connectError: String?) {
        self.path = path
        self.environmentAddress = environmentAddress
        self.connectError = connectError
    }
}

extension Finding {
    /// Check 1: the D-Bus system bus accepts connections.
    public static func bus(_ facts: BusFacts) -> Finding {
        var observed = ["socket: \(facts.path)"]
        if let address = facts.environmentAddress { observed.append("DBUS_SYSTEM_BUS_ADDRESS=\(address)") }
        guard let error = facts.connectError else {
            return Finding(check: "bus", title: "D-Bus system bus", status: .ok,
                           summary: "the system bus accepts connections", observed: observed)
        }
        observed.append("connect: \(error)")
        var fixes = ["sudo systemctl start dbus"]
        if let address = facts.environmentAddress {
            fixes.append("or point DBUS_SYSTEM_BUS_ADDRESS at a running bus (now '\(address)'), or unset it to use /run/dbus/system_bus_socket")
        }
        return Finding(check: "bus", title: "D-Bus system bus", status: .problem,
                       summary: "the system bus does not accept connections, so no program can reach avahi-daemon",
                       observed: observed, fixes: fixes)
    }
}
