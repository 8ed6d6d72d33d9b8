/// Folds raw browse reports into events about logical instances.
public typealias BrowseMerger = DiscoveryMerger<ServiceInstance>

/// Folds raw browse reports into events about logical items: service instances, or the
/// service types of a type enumeration (`ServiceTypeEvent`).
///
/// Avahi's `dns_sd` layer reports an item once per interface *and* per IP protocol, and
/// removes it the same way; it never says how many reports are coming. The merger counts
/// reports per (item, interface), so an item is added on its first report, changes
/// interfaces when an interface gains its first or loses its last report, and is removed when
/// nothing is left.
///
/// When the daemon connection is rebuilt, `beginResync()` forgets the counts but remembers the
/// items; `endResync()` then removes those that were not reported again (in the order of their
/// descriptions). Known items coming back during a resync produce no events.
public struct DiscoveryMerger<Item: Hashable & Sendable & CustomStringConvertible>: Sendable {
    public typealias Event = DiscoveryEvent<Item>
    private var reports: [Item: [NetworkInterface: Int]] = [:]
    /// While resyncing: each known item's interfaces when the resync began.
    private var resyncing: [Item: [NetworkInterface]]? = nil

    public init() {}

    /// The items currently present, with their interfaces.
    public var items: [Item: [NetworkInterface]] {
        reports.mapValues { $0.keys.sorted() }
    }

    /// Records one "added" report and returns the event it causes, if any.
    public mutating func add(_ item: Item, on interface: NetworkInterface) -> Event? {
        var counts = reports[item] ?? [:]
        let isNew = counts.isEmpty
        let newInterface = counts[interface] == nil
        counts[interface, default: 0] += 1
        reports[item] = counts
        if resyncing != nil { return nil }
        if isNew { return .added(item, interfaces: counts.keys.sorted()) }
        return newInterface ? .interfacesChanged(item, interfaces: counts.keys.sorted()) : nil
    }

    /// Records one "removed" report and returns the event it causes, if any. A removal with no
    /// matching report (e.g. after a resync) is ignored.
    public mutating func remove(_ item: Item, on interface: NetworkInterface) -> Event? {
        guard var counts = reports[item], let count = counts[interface] else { return nil }
        counts[interface] = count > 1 ? count - 1 : nil
        let interfaceGone = count == 1
        if counts.isEmpty && resyncing == nil {
            reports[item] = nil
            return .removed(item)
        }
        reports[item] = counts
        if resyncing != nil { return nil }
        return interfaceGone ? .interfacesChanged(item, interfaces: counts.keys.sorted()) : nil
    }

    /// Starts over after the daemon connection was lost: counts are cleared, items kept.
    public mutating func beginResync() {
        resyncing = resyncing ?? items
        for key in reports.keys { reports[key] = [:] }
    }

    /// Ends a resync: items not reported again are removed; the rest report their
    /// interfaces when those changed.
    public mutating func endResync() -> [Event] {
        guard let before = resyncing else { return [] }
        resyncing = nil
        var events: [Event] = []
        for (item, counts) in reports.sorted(by: { $0.key.description < $1.key.description }) {
            if counts.isEmpty {
                reports[item] = nil
                events.append(.removed(item))
            } else if before[item] == nil {
                events.append(.added(item, interfaces: counts.keys.sorted()))
            } else if before[item] != counts.keys.sorted() {
                events.append(.interfacesChanged(item, interfaces: counts.keys.sorted()))
            }
        }
        return events
    }
}
