import Dispatch
import Glibc
import Synchronization
import TransportCore

/// One thread that waits on epoll and runs everything bound to it: socket readiness, work
/// handed over with `execute`, and deadlines (it is a `Scheduler`, so heartbeats, handshake
/// deadlines and reconnect delays run here too).
///
/// Each iteration waits for readiness (or a wake-up, or the next deadline), hands ready
/// descriptors to their owners, runs the deadlines that passed, then the work handed over,
/// and last the work deferred to the end of the iteration (`executeAtEndOfIteration`: where
/// connections write the small sends they gathered).
///
/// - Important: types bound to a loop (`Connection`, `TCPListener`, the rooms) are used on
///   its thread only and check it with `assertOnExecutor()`; other threads reach them through
///   `execute`. `execute`, `schedule`, `inEventLoop` and `shutdown` are safe from any thread.
///   A loop runs until `shutdown()`; tools and tests must call it, or the thread lives on.
public final class EventLoop: Scheduler, @unchecked Sendable {
    // Sendable by construction: `shared` is behind a mutex, `threadID` atomic, and the
    // loop-only fields below are touched on the loop's thread only (asserted).

    /// What a registered descriptor waits for.
    public struct Interest: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let read = Interest(rawValue: 1)
        public static let write = Interest(rawValue: 2)
    }

    /// What the kernel said about a registered descriptor. An error or hang-up is reported as
    /// both, so that the read or write that follows sees it.
    public struct Readiness: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let readable = Readiness(rawValue: 1)
        public static let writable = Readiness(rawValue: 2)
    }

    /// The name given to the thread (seen in `top -H` and debuggers).
    public let name: String

    enum State { case running, stopping, stopped }

    /// What other threads hand over, guarded by the mutex.
    struct Shared {
        var state = State.running
        var tasks: [LoopWork] = []
        var timers = TimerHeap()
        var timerWork: [UInt64: LoopWork] = [:]
        var nextTimerID: UInt64 = 1
        /// False while the loop waits in epoll (or is about to): work handed over then must wake it.
        var isAwake = true
        var isJoined = false
    }

    let shared = Mutex(Shared())
    let threadID = Atomic<UInt>(0)
    let selector: Selector
    private var thread = pthread_t()

    // Loop-only (EventLoop+Run.swift, EventLoop+Registration.swift).
    var registrations: [Selector.Tag: Registration] = [:]
    var nextTag: Selector.Tag = 1
    var endOfIteration: [() -> Void] = []
    /// True while the end-of-iteration work runs (EventLoop+TaskExecutor.swift).
    var isEndingIteration = false

    /// Starts a loop on a new thread.
    /// - Parameter name: the thread's name (at most 15 bytes are kept).
    /// - Throws: `TransportError` when epoll, the eventfd or the thread cannot be created.
    public init(name: String = "svc-loop") throws(TransportError) {
        self.name = name
        selector = try Selector()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            // The thread keeps the loop alive until it has stopped.
            let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            throw TransportError(call: "pthread_create", errno: result)
        }
    }

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool {
        pthread_equal(pthread_self(), threadID.load(ordering: .acquiring)) != 0
    }

    public var isCurrentExecutor: Bool { inEventLoop }

    public var now: ContinuousClock.Instant { .now }

    /// Runs `work` on the loop, after what it is doing now (never inside this call). Work
    /// handed over after `shutdown()` has begun is dropped.
    public func execute(_ work: @escaping () -> Void) {
        enqueue(LoopWork(work))
    }

    /// Runs `body` on the loop and waits for its result, blocking the calling thread: for
    /// threads that may block (tests, a benchmark's driver), never for the loop itself or a
    /// Swift concurrency task (use `submit`), and only while the loop surely runs: work handed
    /// to a stopped loop is a programming error.
    public func runAndWait<Result: Sendable>(_ body: @escaping () -> Result) -> Result {
        precondition(!inEventLoop, "EventLoop.runAndWait called on the loop \(name) itself; call body directly")
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result?>(nil)
        // The semaphore is signalled when the loop lets go of the work: after running it, or
        // when it drops it at shutdown; either way this thread does not wait forever.
        guard enqueue(Self.signalling(done, when: { result.withLock { $0 = body() } })) else {
            preconditionFailure("EventLoop.runAndWait: the loop \(name) has stopped")
        }
        done.wait()
        guard let value = result.withLock({ $0 }) else { preconditionFailure("EventLoop.runAndWait: the loop \(name) stopped before it ran the work") }
        return value
    }

    /// Work that signals `done` once the loop has released it, run or not.
    private static func signalling(_ done: DispatchSemaphore, when body: @escaping () -> Void) -> LoopWork {
        let release = SignalOnRelease(done)
        return LoopWork { withExtendedLifetime(release) { body() } }
    }

    /// Hands `work` to the loop; false when the loop has stopped (the work is dropped).
    @discardableResult
    private func enqueue(_ work: LoopWork) -> Bool {
        let fromOutside = !inEventLoop
        return shared.withLock { shared in
            // While stopping, the loop still runs what its own closing hands over.
            guard shared.state != .stopped else { return false }
            shared.tasks.append(work)
            wakeIfAsleep(&shared, fromOutside: fromOutside)
            return true
        }
    }

    /// Runs `work` on the loop once `deadline` has passed. The loop waits in whole
    /// milliseconds, rounded up, which is all the leeway it takes; `leeway` is not used.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, leeway: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        let work = LoopWork(work)
        let fromOutside = !inEventLoop
        let id = shared.withLock { shared -> UInt64 in
            let id = shared.nextTimerID
            shared.nextTimerID += 1
            guard shared.state == .running else { return id }
            shared.timers.insert(TimerHeap.Entry(deadline: deadline, id: id))
            shared.timerWork[id] = work
            wakeIfAsleep(&shared, fromOutside: fromOutside)
            return id
        }
        return LoopTimer(loop: self, id: id)
    }

    /// Runs `work` at the end of the current iteration, after every ready descriptor, timer
    /// and task of this iteration: for work that gathers, such as writing many small sends
    /// with one system call.
    public func executeAtEndOfIteration(_ work: @escaping () -> Void) {
        assertOnExecutor()
        endOfIteration.append(work)
    }

    /// Stops the loop and waits for its thread to end: runs the work already handed over, tells
    /// every registered owner that the loop is closing (connections close), runs the work that
    /// caused, drops the timers, closes epoll and the eventfd. Later calls return at once.
    ///
    /// - Important: not from the loop's own thread (it would wait for itself).
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on the loop \(name) itself; call it from another thread")
        let mustJoin = shared.withLock { shared -> Bool in
            if shared.state == .running {
                shared.state = .stopping
                selector.wake()
            }
            defer { shared.isJoined = true }
            return !shared.isJoined
        }
        if mustJoin { pthread_join(thread, nil) }
    }

    func cancelTimer(_ id: UInt64) {
        let cancelled = shared.withLock { shared -> LoopWork? in
            guard let work = shared.timerWork.removeValue(forKey: id) else { return nil }
            // Cancelled heartbeats and deadlines would otherwise pile up until they come due.
            if shared.timers.count > 2 * shared.timerWork.count + 64 {
                let live = shared.timerWork
                shared.timers.compact { live[$0.id] != nil }
            }
            return work
        }
        // Released here, outside the lock: what it captured may hand work to the loop as it goes.
        _ = cancelled
    }

    /// Called with the lock held, so the selector cannot be closed meanwhile.
    private func wakeIfAsleep(_ shared: inout Shared, fromOutside: Bool) {
        guard fromOutside, !shared.isAwake else { return }
        shared.isAwake = true
        selector.wake()
    }
}

/// A closure that crosses to the loop's thread and is called only there.
struct LoopWork: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// A deadline on a loop; `cancel()` from any thread.
private final class LoopTimer: ScheduledWork {
    private weak var loop: EventLoop?
    private let id: UInt64

    init(loop: EventLoop, id: UInt64) {
        self.loop = loop
        self.id = id
    }

    func cancel() { loop?.cancelTimer(id) }
}

/// Signals a semaphore when the last reference goes away.
private final class SignalOnRelease: Sendable {
    private let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
    deinit { semaphore.signal() }
}
