import Glibc

/// Where the D-Bus system bus is, and whether it accepts connections. avahi-daemon is reached
/// only through this bus, so this tells "no bus" apart from "no daemon".
public enum SystemBus {
    public enum Status: Sendable, Hashable {
        case reachable(address: String)
        case unreachable(address: String, reason: String)
        /// This process cannot open another file descriptor (EMFILE, or ENFILE for the whole
        /// system), so nothing is known about the bus or the daemon.
        case outOfFileDescriptors(reason: String)
    }

    /// The socket path from `DBUS_SYSTEM_BUS_ADDRESS` (its first `unix:path=` entry), or the
    /// standard `/run/dbus/system_bus_socket`.
    public static var socketPath: String {
        guard let raw = getenv("DBUS_SYSTEM_BUS_ADDRESS") else { return "/run/dbus/system_bus_socket" }
        for address in String(cString: raw).split(separator: ";") where address.hasPrefix("unix:") {
            for pair in address.dropFirst(5).split(separator: ",") where pair.hasPrefix("path=") {
                return String(pair.dropFirst(5))
            }
        }
        return String(cString: raw)
    }

    /// Tries to connect to the bus socket (and closes at once).
    public static func probe() -> Status {
        let path = socketPath
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            return code == EMFILE || code == ENFILE ? .outOfFileDescriptors(reason: reason) : .unreachable(address: path, reason: reason)
        }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { return .unreachable(address: path, reason: "path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? .reachable(address: path)
            : .unreachable(address: path, reason: String(cString: strerror(errno)))
    }
}
