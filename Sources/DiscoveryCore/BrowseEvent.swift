/// A change in the set of instances a browse sees.
public typealias BrowseEvent = DiscoveryEvent<ServiceInstance>

/// A change in the set of service types a type enumeration sees (RFC 6763 §9).
public typealias ServiceTypeEvent = DiscoveryEvent<ServiceType>

/// A change in the set of items (service instances, or service types) a browse sees.
public enum DiscoveryEvent<Item: Hashable & Sendable>: Sendable, Hashable {
    /// A new item, with the interfaces it is reachable on.
    case added(Item, interfaces: [NetworkInterface])
    /// The item is gone from every interface.
    case removed(Item)
    /// The item is still there, now on this set of interfaces.
    case interfacesChanged(Item, interfaces: [NetworkInterface])
    /// Nothing new arrived for a quiet period: what is on the network now has been reported.
    /// Sent once per browse; later changes still follow.
    case completeForNow
}
