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
    public var events: Events { Events(executor: scheduler, buffer: { [self] in eventBuffer }) }

    /// See `RoomServer.events`.
    public typealias Events = EventSequence<Event>
}
