/// The event loop's deadlines in order: a binary min-heap on (deadline, id), so that work
/// due at the same instant runs in the order it was scheduled. Cancelled entries stay until
/// they come up or the heap is compacted; the loop keeps the work itself elsewhere.
struct TimerHeap {
    struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64

        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && id < other.id)
        }
    }

    private var entries: [Entry] = []

    var count: Int { entries.count }
    /// The entry due first.
    var first: Entry? { entries.first }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    /// Removes and returns the entry due first.
    mutating func removeFirst() -> Entry? {
        guard let first = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first
    }

    /// Keeps only the entries `isLive` says are still wanted.
    mutating func compact(keeping isLive: (Entry) -> Bool) {
        let live = entries.filter(isLive)
        entries = []
        entries.reserveCapacity(live.count)
        for entry in live { insert(entry) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].precedes(entries[smallest]) { smallest = left }
            if right < entries.count, entries[right].precedes(entries[smallest]) { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
