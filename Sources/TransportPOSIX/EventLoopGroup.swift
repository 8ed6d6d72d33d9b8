import Synchronization

/// A small fixed set of event loops, handed out in turn: connections spread over them, and
/// each stays on the loop it was given. Tools use one or two.
public final class EventLoopGroup: Sendable {
    /// The loops, in the order `next()` hands them out.
    public let loops: [EventLoop]
    private let counter = Atomic<UInt>(0)

    /// Starts `loopCount` loops (at least one), named `name-0`, `name-1`, ...
    /// - Throws: `TransportError` when a loop cannot start; the ones already started are stopped.
    public init(loopCount: Int, name: String = "svc-loop") throws(TransportError) {
        var loops: [EventLoop] = []
        do {
            for index in 0..<max(1, loopCount) {
                loops.append(try EventLoop(name: "\(name)-\(index)"))
            }
        } catch {
            loops.forEach { $0.shutdown() }
            throw error
        }
        self.loops = loops
    }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(index % UInt(loops.count))]
    }

    /// Shuts every loop down and waits for their threads; see `EventLoop.shutdown()`.
    public func shutdown() {
        loops.forEach { $0.shutdown() }
    }
}
