import Glibc
import HostDiagnosis
import TransportCore

/// Gathers `NetworkInterfaceFacts` for every interface: flags and addresses from
/// `getifaddrs`, kind from /sys/class/net.
enum InterfaceProbe {
    static func facts() -> [NetworkInterfaceFacts] {
        var byName: [String: NetworkInterfaceFacts] = [:]
        var order: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var cursor = list
            while let entry = cursor?.pointee {
                defer { cursor = entry.ifa_next }
                let name = String(cString: entry.ifa_name)
                if byName[name] == nil { order.append(name); byName[name] = NetworkInterfaceFacts(name: name) }
                let flags = Int32(bitPattern: entry.ifa_flags)
                byName[name]?.isUp = flags & Int32(IFF_UP) != 0
                byName[name]?.isMulticast = flags & Int32(IFF_MULTICAST) != 0
                byName[name]?.isLoopback = flags & Int32(IFF_LOOPBACK) != 0
                byName[name]?.isPointToPoint = flags & Int32(IFF_POINTOPOINT) != 0
                if let address = entry.ifa_addr.flatMap(ipAddress) { byName[name]?.addresses.append(address) }
            }
            freeifaddrs(list)
        }
        return order.compactMap { name in byName[name].map(withSysfs) }
    }

    static func ipAddress(_ address: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
            }
        default: return nil
        }
    }

    static func withSysfs(_ facts: NetworkInterfaceFacts) -> NetworkInterfaceFacts {
        var facts = facts
        let directory = "/sys/class/net/" + facts.name
        facts.linkType = (try? SystemFiles.read(directory + "/type", limit: 32)).flatMap { Int($0.prefix { $0 != "\n" }) }
        facts.deviceType = (try? SystemFiles.read(directory + "/uevent", limit: 4096)).flatMap { text in
            text.split(separator: "\n").first { $0.hasPrefix("DEVTYPE=") }.map { String($0.dropFirst("DEVTYPE=".count)) }
        }
        facts.isBridge = SystemFiles.exists(directory + "/bridge")
        facts.hasMaster = SystemFiles.exists(directory + "/master")
        facts.isTunTap = SystemFiles.exists(directory + "/tun_flags")
        return facts
    }
}
