/// What browsing every service type (`svc-browse --all`) keeps, as a pure state machine: the
/// types a type enumeration reported, the instances of each, within bounds, and when the
/// first batch is complete. The I/O layer feeds it events and performs what it returns.
///
/// Types and instances come from the network, so both are bounded: at most `maximumTypes`
/// types are browsed at once (each browse costs a daemon connection), at most
/// `maximumInstances` instances (over all types) are reported at once. One over a limit
/// waits, with as many more at most, and is taken in (oldest first) when a slot frees: a type
/// frees its slot when it is removed and has no instance left, an instance when it is removed.
/// Beyond the waiting bound a type or instance is dropped. Each limit is reported once.
public struct AllTypesState: Sendable {
    /// The most service types browsed at once, and the most waiting for a slot.
    public static let defaultMaximumTypes = 64
    /// The most instances, over all types, kept at once, and the most waiting for a slot.
    public static let defaultMaximumInstances = 1024

    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Start browsing this type's instances, and feed their events to `instanceEvent`.
        case browse(ServiceType)
        /// Stop browsing this type (it was removed and has no instance left).
        case stopBrowsing(ServiceType)
        /// Report a change in the set of types.
        case reportType(ServiceTypeEvent)
        /// Report a change in the set of instances.
        case reportInstance(BrowseEvent)
        /// A type waits for a slot: `maximumTypes` are browsed already (once per run).
        case typeLimitReached(ServiceType)
        /// An instance waits for a slot: `maximumInstances` are kept already (once per run).
        case instanceLimitReached(ServiceInstance)
        /// Every type there is now, and every instance of those, has been reported.
        case completeForNow
    }

    /// The most types browsed at once (`defaultMaximumTypes` unless given); as many more wait.
    public let maximumTypes: Int
    /// The most instances, over all types, reported and not removed at once; as many more wait.
    public let maximumInstances: Int
    /// The types being browsed; a type removed while it has instances stays here until its
    /// last instance is removed (its browse reports those removals).
    public private(set) var browsed: Set<ServiceType> = []
    /// The instances reported and not removed.
    public private(set) var instances: Set<ServiceInstance> = []
    /// Types over the limit, oldest first, with their interfaces.
    private var waitingTypes = WaitingList<ServiceType>()
    /// Instances over the limit, oldest first, with their interfaces.
    private var waitingInstances = WaitingList<ServiceInstance>()
    /// How many reported instances each browsed type has.
    private var instanceCounts: [ServiceType: Int] = [:]
    /// Browsed types that were removed but still have instances.
    private var withdrawn: Set<ServiceType> = []
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

    /// The types waiting for a slot, oldest first.
    public var typesWaiting: [ServiceType] { waitingTypes.items }
    /// The instances waiting for a slot, oldest first.
    public var instancesWaiting: [ServiceInstance] { waitingInstances.items }

    /// Takes one event of the type enumeration.
    public mutating func typeEvent(_ event: ServiceTypeEvent) -> [Action] {
        switch event {
        case .added(let type, let interfaces):
            if browsed.contains(type) {
                withdrawn.remove(type)
                return [.reportType(event)]
            }
            guard browsed.count < maximumTypes else {
                if waitingTypes.contains(type) {
                    waitingTypes.update(type, interfaces: interfaces)
                } else {
                    waitingTypes.append(type, interfaces: interfaces, limit: maximumTypes)
                }
                guard !notedTypeLimit else { return [] }
                notedTypeLimit = true
                return [.typeLimitReached(type)]
            }
            return startBrowsing(type, interfaces: interfaces)
        case .removed(let type):
            if waitingTypes.remove(type) { return [] }
            guard browsed.contains(type) else { return [] }
            guard instanceCounts[type, default: 0] == 0 else {
                withdrawn.insert(type)
                return [.reportType(event)]
            }
            return [.reportType(event)] + stopBrowsing(type)
        case .interfacesChanged(let type, let interfaces):
            waitingTypes.update(type, interfaces: interfaces)
            return browsed.contains(type) ? [.reportType(event)] : []
        case .completeForNow:
            typesComplete = true
            return completion()
        }
    }

    /// Takes one event of the browse for `type`'s instances; events of a type no longer
    /// browsed (its browse was stopped) are ignored.
    public mutating func instanceEvent(_ event: BrowseEvent, of type: ServiceType) -> [Action] {
        guard browsed.contains(type) else { return [] }
        switch event {
        case .added(let instance, let interfaces):
            guard !instances.contains(instance) else { return [.reportInstance(event)] }
            guard instances.count < maximumInstances else {
                if waitingInstances.contains(instance) {
                    waitingInstances.update(instance, interfaces: interfaces)
                } else {
                    waitingInstances.append(instance, interfaces: interfaces, limit: maximumInstances)
                }
                guard !notedInstanceLimit else { return [] }
                notedInstanceLimit = true
                return [.instanceLimitReached(instance)]
            }
            return keep(instance, event: event)
        case .removed(let instance):
            if waitingInstances.remove(instance) { return [] }
            guard instances.remove(instance) != nil else { return [] }
            let left = max(0, instanceCounts[instance.type, default: 0] - 1)
            instanceCounts[instance.type] = left
            var actions: [Action] = [.reportInstance(event)]
            if let (next, interfaces) = waitingInstances.removeFirst() {
                actions += keep(next, event: .added(next, interfaces: interfaces))
            }
            if left == 0 && withdrawn.contains(instance.type) { actions += stopBrowsing(instance.type) }
            return actions
        case .interfacesChanged(let instance, let interfaces):
            waitingInstances.update(instance, interfaces: interfaces)
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

    private mutating func startBrowsing(_ type: ServiceType, interfaces: [NetworkInterface]) -> [Action] {
        browsed.insert(type)
        if !typesComplete { pending.insert(type) }
        return [.reportType(.added(type, interfaces: interfaces)), .browse(type)]
    }

    private mutating func keep(_ instance: ServiceInstance, event: BrowseEvent) -> [Action] {
        instances.insert(instance)
        instanceCounts[instance.type, default: 0] += 1
        return [.reportInstance(event)]
    }

    /// Frees `type`'s slot (it has no instance left), forgets its waiting instances, and
    /// lets the oldest waiting type in.
    private mutating func stopBrowsing(_ type: ServiceType) -> [Action] {
        browsed.remove(type)
        withdrawn.remove(type)
        instanceCounts[type] = nil
        pending.remove(type)
        waitingInstances.removeAll { $0.type == type }
        var actions: [Action] = [.stopBrowsing(type)]
        if let (next, interfaces) = waitingTypes.removeFirst() {
            actions += startBrowsing(next, interfaces: interfaces)
        }
        return actions + completion()
    }

    private mutating func completion() -> [Action] {
        guard typesComplete, pending.isEmpty, !sentComplete else { return [] }
        sentComplete = true
        return [.completeForNow]
    }
}

/// Items waiting for a slot, oldest first, each with its latest interfaces; bounded by the
/// `limit` given to `append`.
struct WaitingList<Item: Hashable & Sendable>: Sendable {
    private var order: [Item] = []
    private var interfaces: [Item: [NetworkInterface]] = [:]

    var items: [Item] { order }

    func contains(_ item: Item) -> Bool { interfaces[item] != nil }

    /// Adds `item` last, unless `limit` items wait already (then it is dropped).
    mutating func append(_ item: Item, interfaces itemInterfaces: [NetworkInterface], limit: Int) {
        guard interfaces[item] == nil, order.count < limit else { return }
        order.append(item)
        interfaces[item] = itemInterfaces
    }

    /// Changes the interfaces of `item` if it waits.
    mutating func update(_ item: Item, interfaces itemInterfaces: [NetworkInterface]) {
        if interfaces[item] != nil { interfaces[item] = itemInterfaces }
    }

    /// Removes `item`; whether it was waiting.
    mutating func remove(_ item: Item) -> Bool {
        guard interfaces.removeValue(forKey: item) != nil else { return false }
        order.removeAll { $0 == item }
        return true
    }

    mutating func removeAll(where shouldRemove: (Item) -> Bool) {
        order.removeAll(where: shouldRemove)
        interfaces = interfaces.filter { !shouldRemove($0.key) }
    }

    /// Takes the oldest item and its interfaces out.
    mutating func removeFirst() -> (Item, [NetworkInterface])? {
        guard !order.isEmpty else { return nil }
        let item = order.removeFirst()
        return interfaces.removeValue(forKey: item).map { (item, $0) }
    }
}
