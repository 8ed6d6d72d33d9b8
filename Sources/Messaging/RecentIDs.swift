/// The last few transfer ids that ended on a connection: a frame for one of them crossed the
/// end on the wire and is dropped, not answered as an error. Bounded: the oldest goes first.
struct RecentIDs<ID: Equatable> {
    private var ids: [ID] = []
    let capacity: Int

    init(capacity: Int = 16) { self.capacity = capacity }

    mutating func insert(_ id: ID) {
        ids.removeAll { $0 == id }
        ids.append(id)
        if ids.count > capacity { ids.removeFirst() }
    }

    func contains(_ id: ID) -> Bool { ids.contains(id) }
}
