import DiscoveryCore
import Glibc

extension NetworkInterface {
    /// The interface named `name` (`if_nametoindex`), or nil when there is none.
    public static func named(_ name: String) -> NetworkInterface? {
        guard !name.isEmpty, name.utf8.count < Int(IF_NAMESIZE), !name.utf8.contains(0) else { return nil }
        let index = if_nametoindex(name)
        return index == 0 ? nil : NetworkInterface(index: index, name: name)
    }

    /// The interfaces this host has now (`if_nameindex`), in index order.
    public static func all() -> [NetworkInterface] {
        guard let list = if_nameindex() else { return [] }
        defer { if_freenameindex(list) }
        var interfaces: [NetworkInterface] = []
        var entry = list
        while entry.pointee.if_index != 0, let name = entry.pointee.if_name {
            interfaces.append(NetworkInterface(index: entry.pointee.if_index, name: boundedName(name)))
            entry += 1
        }
        return interfaces.sorted()
    }
}

/// The interface with index `index`, named by the kernel (or by its number once it is gone).
func networkInterface(_ index: UInt32) -> NetworkInterface {
    var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard if_indextoname(index, &buffer) != nil else { return NetworkInterface(index: index, name: String(index)) }
    return NetworkInterface(index: index, name: buffer.withUnsafeBufferPointer { boundedName($0.baseAddress!) })
}

/// An interface name as the kernel gives it: at most `IF_NAMESIZE` bytes, as UTF-8 (it is
/// shown only through the terminal-safe output).
private func boundedName(_ pointer: UnsafePointer<CChar>) -> String {
    let length = strnlen(pointer, Int(IF_NAMESIZE))
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
}
