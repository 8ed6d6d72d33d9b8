import Synchronization
import TransportCore

extension RoomServer {
    /// The room's events, in the order they happened, as an async sequence: iterate it from
    /// one task while the room runs. It ends once `closeAll` returned and every event before
    /// that was taken.
    ///
    /// Back-pressure: events wait in a buffer of `Options.eventBufferLimit`. When it is full,
    /// the room stops reading from every member (their frames wait in the kernel and in their
    /// outboxes) and reads again once the consumer took it down to half. Nothing is dropped:
    /// the events that need no read (the operator's own lines, timers' summaries) are
    /// buffered beyond the limit. Members' heartbeats are not read meanwhile either: a
    /// consumer that takes nothing for as long as the heartbeat allows loses them.
    ///
    /// - Important: one task iterates at a time. A cancelled `next()` returns nil and takes no
    ///   event: what was buffered stays for the next call.
    public var events: Events { Events(room: self) }

    /// See `RoomServer.events`.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = Event
        let room: RoomServer

        public func makeAsyncIterator() -> Iterator { Iterator(room: room) }

        /// Takes the next event, waiting for it on the room's scheduler.
        public struct Iterator: AsyncIteratorProtocol {
            let room: RoomServer

            /// The next event, or nil when the room closed (and every event was taken) or the
            /// calling task was cancelled.
            public mutating func next() async -> Event? {
                let room = self.room
                let waiter = EventWaiter()
                return await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                        room.scheduler.execute { room.eventBuffer.next(waiter, continuation) }
                    }
                } onCancel: {
                    waiter.cancelled.store(true, ordering: .sequentiallyConsistent)
                    room.scheduler.execute { room.eventBuffer.cancel(waiter) }
                }
            }
        }
    }
}
