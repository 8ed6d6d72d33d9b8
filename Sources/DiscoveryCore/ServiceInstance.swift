/// A network interface as the daemon reports it: its index, and its name when it still exists.
public struct NetworkInterface: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let index: UInt32
    public let name: String

    public init(index: UInt32, name: String) {
        self.index = index
        self.name = name
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.index < rhs.index }
    public var description: String { name }
}

/// One logical service instance: a name, a type and a domain. Its identity does not depend
/// on which interfaces or IP protocols it was seen on.
public struct ServiceInstance: Sendable, Hashable, CustomStringConvertible {
    /// The instance name exactly as published (not DNS-escaped).
    public let name: String
    public let type: ServiceType
    public let domain: ServiceDomain

    public init(name: String, type: ServiceType, domain: ServiceDomain) {
        self.name = name
        self.type = type
        self.domain = domain
    }

    public var description: String { "\(name).\(type.baseType).\(domain.name)" }
}
