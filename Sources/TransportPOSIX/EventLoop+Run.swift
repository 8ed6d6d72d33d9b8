import Glibc
import TransportCore

extension EventLoop {
    /// The loop's thread: iterations until `shutdown()`, then the closing down.
    func run() {
        threadID.store(pthread_self(), ordering: .releasing)
        nameCurrentThread(name)
        while let timeout = nextWait() {
            do throws(TransportError) {
                try selector.wait(timeoutMilliseconds: timeout) { tag, readiness in
                    // An earlier owner in this batch may have changed or dropped this registration.
                    guard let registration = registrations[tag] else { return }
                    let wanted = readiness.intersection(registration.interest.readiness)
                    if !wanted.isEmpty { registration.owner.ready(wanted) }
                }
            } catch {
                fatalError("event loop \(name): \(error): the loop cannot wait for its sockets any more")
            }
            runDueTimers()
            runTasks()
            runEndOfIteration()
        }
        closeDown()
    }

    /// How long the next wait may last in milliseconds (0: not at all, -1: until woken), or nil
    /// when the loop is to stop.
    private func nextWait() -> Int32? {
        shared.withLock { shared -> Int32? in
            if shared.state != .running { return nil }
            if !shared.tasks.isEmpty { return 0 }
            shared.isAwake = false
            guard let first = shared.timers.first else { return -1 }
            let remaining = first.deadline - .now
            guard remaining > .zero else { return 0 }
            // Rounded up, so that a deadline is never run early; at most an hour, then look again.
            let milliseconds = (remaining.nanoseconds + 999_999) / 1_000_000
            return Int32(min(milliseconds, 3_600_000))
        }
    }

    /// Runs the deadlines that have passed, one at a time, so that one may cancel the next.
    private func runDueTimers() {
        let now = ContinuousClock.now
        while true {
            let due = shared.withLock { shared -> LoopWork?? in
                shared.isAwake = true
                guard let first = shared.timers.first, first.deadline <= now else { return nil }
                _ = shared.timers.removeFirst()
                return .some(shared.timerWork.removeValue(forKey: first.id))
            }
            guard let due else { return }
            due?.run()
        }
    }

    /// Runs the work handed over so far; what it hands over runs in the next iteration.
    private func runTasks() {
        let tasks = shared.withLock { shared in
            shared.isAwake = true
            return shared.tasks.isEmpty ? [] : shared.tasks.exchange([])
        }
        for task in tasks { task.run() }
    }

    private func runEndOfIteration() {
        isEndingIteration = true
        defer { isEndingIteration = false }
        while !endOfIteration.isEmpty {
            let work = endOfIteration
            endOfIteration = []
            for item in work { item() }
        }
    }

    /// After `shutdown()`: runs the work handed over, closes every registered owner, runs what
    /// that handed over (a few rounds, in case work keeps handing over more), then drops the
    /// timers and closes the selector.
    private func closeDown() {
        runTasks()
        runEndOfIteration()
        for registration in Array(registrations.values) { registration.owner.eventLoopIsClosing() }
        registrations = [:]
        for _ in 0..<8 {
            runTasks()
            runEndOfIteration()
        }
        let dropped = shared.withLock { shared in
            shared.state = .stopped
            selector.close()
            defer {
                shared.timers = TimerHeap()
                shared.timerWork = [:]
                shared.tasks = []
            }
            return (shared.tasks, shared.timerWork)
        }
        // Released outside the lock.
        _ = dropped
    }
}

extension Array {
    /// Returns the array and leaves `replacement` in its place.
    fileprivate mutating func exchange(_ replacement: [Element]) -> [Element] {
        let old = self
        self = replacement
        return old
    }
}
