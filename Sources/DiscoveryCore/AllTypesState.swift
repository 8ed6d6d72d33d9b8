/// What browsing every service type (`svc-browse --all`) keeps, as a pure state machine: the
/// types a type enumeration reported, the instances of each, within bounds, and when the
/// first batch is complete. The I/O layer feeds it events and performs what it returns.
///
/// Types and instances come from the network, so both are bounded: a type beyond
/// `maximumTypes` is not browsed (each browse costs a daemon connection), an instance beyond
/// `maximumInstances` (over all types) is not reported. Each limit is reported once.
public struct AllTypesState: Sendable {
    /// The most service types browsed at once.
    public static let defaultMaximumTypes = 64
    /// The most instances, over all types, kept at once.
    public static let defaultMaximumInstances = 1024

    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Start browsing this type's instances, and feed their events to `instanceEvent`.
        case browse(ServiceType)
        /// Report a change in the set of types.
        case reportType(ServiceTypeEvent)
        /// Report a change in the set of instances.
        case reportInstance(BrowseEvent)
        /// A type was not browsed: `maximumTypes` are browsed already (once per run).
        case typeLimitReached(ServiceType)
        /// An instance was not reported: `maximumInstances` are kept already (once per run).
        case instanceLimitReached(ServiceInstance)
        /// Every type there is now, and every instance of those, has been reported.
        case completeForNow
    }

    /// The most types browsed at once (`defaultMaximumTypes` unless given).
    public let maximumTypes: Int
    /// The most instances, over all types, reported and not removed at once.
    public let maximumInstances: Int
    /// The types being browsed; a type stays here when it is removed (its browse goes on and
    /// reports the removal of its instances).
    public private(set) var browsed: Set<ServiceType> = []
    /// The instances reported and not removed.
    public private(set) var instances: Set<ServiceInstance> = []
    /// Types browsed during the first batch whose own first batch has not ended.
    private var pending: Set<ServiceType> = []
    private var typesComplete = false
    private var sentComplete = false
    private var notedTypeLimit = false
    private var notedInstanceLimit = false

    public init(maximumTypes: Int = defaultMaximumTypes, maximumInstances: Int = defaultMaximumInstances) {
        self.maximumTypes = maximumTypes
        self.maximumInstances = maximumInstances
    }

    /// Takes one event of the type enumeration.
    public mutating func typeEvent(_ event: ServiceTypeEvent) -> [Action] {
        switch event {
        case .added(let type, _):
            if browsed.contains(type) { return [.reportType(event)] }
            guard browsed.count < maximumTypes else {
                guard !notedTypeLimit else { return [] }
                notedTypeLimit = true
                return [.typeLimitReached(type)]
            }
            browsed.insert(type)
            if !typesComplete { pending.insert(type) }
            return [.reportType(event), .browse(type)]
        case .removed(let type), .interfacesChanged(let type, _):
            return browsed.contains(type) ? [.reportType(event)] : []
        case .completeForNow:
            typesComplete = true
            return completion()
        }
    }

    /// Takes one event of the browse for `type`'s instances.
    public mutating func instanceEvent(_ event: BrowseEvent, of type: ServiceType) -> [Action] {
        switch event {
        case .added(let instance, _):
            guard !instances.contains(instance) else { return [.reportInstance(event)] }
            guard instances.count < maximumInstances else {
                guard !notedInstanceLimit else { return [] }
                notedInstanceLimit = true
                return [.instanceLimitReached(instance)]
            }
            instances.insert(instance)
            return [.reportInstance(event)]
        case .removed(let instance):
            return instances.remove(instance) == nil ? [] : [.reportInstance(event)]
        case .interfacesChanged(let instance, _):
            return instances.contains(instance) ? [.reportInstance(event)] : []
        case .completeForNow:
            pending.remove(type)
            return completion()
        }
    }

    /// The browse for `type` ended (it failed): its first batch will not end by itself.
    public mutating func browseEnded(_ type: ServiceType) -> [Action] {
        pending.remove(type)
        return completion()
    }

    private mutating func completion() -> [Action] {
        guard typesComplete, pending.isEmpty, !sentComplete else { return [] }
        sentComplete = true
        return [.completeForNow]
    }
}
