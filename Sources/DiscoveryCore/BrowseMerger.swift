/// Folds raw browse reports into events about logical instances.
///
/// Avahi's `dns_sd` layer reports an instance once per interface *and* per IP protocol, and
/// removes it the same way; it never says how many reports are coming. The merger counts
/// reports per (instance, interface), so an instance is added on its first report, changes
/// interfaces when an interface gains its first or loses its last report, and is removed when
/// nothing is left.
///
/// When the daemon connection is rebuilt, `beginResync()` forgets the counts but remembers the
/// instances; `endResync()` then removes those that were not reported again. Known instances
/// coming back during a resync produce no events.
public struct BrowseMerger: Sendable {
    private var reports: [ServiceInstance: [NetworkInterface: Int]] = [:]
    /// While resyncing: each known instance's interfaces when the resync began.
    private var resyncing: [ServiceInstance: [NetworkInterface]]? = nil

    public init() {}

    /// The instances currently present, with their interfaces.
    public var instances: [ServiceInstance: [NetworkInterface]] {
        reports.mapValues { $0.keys.sorted() }
    }

    /// Records one "added" report and returns the event it causes, if any.
    public mutating func add(_ instance: ServiceInstance, on interface: NetworkInterface) -> BrowseEvent? {
        var counts = reports[instance] ?? [:]
        let isNew = counts.isEmpty
        let newInterface = counts[interface] == nil
        counts[interface, default: 0] += 1
        reports[instance] = counts
        if resyncing != nil { return nil }
        if isNew { return .added(instance, interfaces: counts.keys.sorted()) }
        return newInterface ? .interfacesChanged(instance, interfaces: counts.keys.sorted()) : nil
    }

    /// Records one "removed" report and returns the event it causes, if any. A removal with no
    /// matching report (e.g. after a resync) is ignored.
    public mutating func remove(_ instance: ServiceInstance, on interface: NetworkInterface) -> BrowseEvent? {
        guard var counts = reports[instance], let count = counts[interface] else { return nil }
        counts[interface] = count > 1 ? count - 1 : nil
        let interfaceGone = count == 1
        if counts.isEmpty && resyncing == nil {
            reports[instance] = nil
            return .removed(instance)
        }
        reports[instance] = counts
        if resyncing != nil { return nil }
        return interfaceGone ? .interfacesChanged(instance, interfaces: counts.keys.sorted()) : nil
    }

    /// Starts over after the daemon connection was lost: counts are cleared, instances kept.
    public mutating func beginResync() {
        resyncing = resyncing ?? instances
        for key in reports.keys { reports[key] = [:] }
    }

    /// Ends a resync: instances not reported again are removed; the rest report their
    /// interfaces when those changed.
    public mutating func endResync() -> [BrowseEvent] {
        guard let before = resyncing else { return [] }
        resyncing = nil
        var events: [BrowseEvent] = []
        for (instance, counts) in reports.sorted(by: { $0.key.name < $1.key.name }) {
            if counts.isEmpty {
                reports[instance] = nil
                events.append(.removed(instance))
            } else if before[instance] == nil {
                events.append(.added(instance, interfaces: counts.keys.sorted()))
            } else if before[instance] != counts.keys.sorted() {
                events.append(.interfacesChanged(instance, interfaces: counts.keys.sorted()))
            }
        }
        return events
    }
}
