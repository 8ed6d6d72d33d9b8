/// A change in the set of instances a browse sees.
public enum BrowseEvent: Sendable, Hashable {
    /// A new instance, with the interfaces it is reachable on.
    case added(ServiceInstance, interfaces: [NetworkInterface])
    /// The instance is gone from every interface.
    case removed(ServiceInstance)
    /// The instance is still there, now on this set of interfaces.
    case interfacesChanged(ServiceInstance, interfaces: [NetworkInterface])
    /// Nothing new arrived for a quiet period: what is on the network now has been reported.
    /// Sent once per browse; later changes still follow.
    case completeForNow
}
