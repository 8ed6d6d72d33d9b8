import Dispatch
import Synchronization

/// How much a producer may have on its way at once: it takes room before handing work over
/// and the consumer gives the room back when the work is done, so a producer faster than the
/// network waits instead of filling memory. One thread at a time may wait in `acquire`.
final class FlowWindow: Sendable {
    private struct State {
        var used = 0
        var waiting = false
        var closed = false
    }

    let limit: Int
    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits until `amount` fits (anything fits when nothing is on its way), then takes it.
    func acquire(_ amount: Int) {
        while true {
            let taken = state.withLock { state -> Bool in
                if state.closed || state.used == 0 || state.used + amount <= limit {
                    state.used += amount
                    state.waiting = false
                    return true
                }
                state.waiting = true
                return false
            }
            if taken { return }
            wakeUp.wait()
        }
    }

    /// Takes `amount` without waiting (it may pass the limit).
    func take(_ amount: Int) {
        state.withLock { $0.used += amount }
    }

    /// Gives `amount` back.
    func release(_ amount: Int) {
        let wake = state.withLock { state -> Bool in
            state.used = max(0, state.used - amount)
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { wakeUp.signal() }
    }

    /// Nothing waits any more, now or later (the session is over).
    func close() {
        let wake = state.withLock { state -> Bool in
            state.closed = true
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { wakeUp.signal() }
    }
}
