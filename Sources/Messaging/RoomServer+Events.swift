extension RoomServer {
    /// The room's events, in the order they happened, as an async sequence: iterate it from
    /// one task while the room runs. It ends once `closeAll` returned and every event before
    /// that was taken.
    ///
    /// Back-pressure: events wait in a buffer of `Options.eventBufferLimit`. When it is full,
    /// the room stops reading from every member (their frames wait in the kernel and in their
    /// outboxes) and reads again once the consumer took it down to half. Nothing is dropped:
    /// the events that need no read (the operator's own lines, timers' summaries) are
    /// buffered beyond the limit.
    ///
    /// The hold is bounded: members' heartbeats are not read meanwhile either, so for 4
    /// heartbeat intervals (60 s by default) the room counts every member it does not read as
    /// alive, and keeps pinging them so that they keep hearing it. When reading has been held
    /// that long in a row (the consumer did not take the buffer down to half), the consumer is
    /// stalled: a `note` event says so; members then count as silent and each is dropped with
    /// `heartbeat-timeout` ("the room has read nothing from its members for too long") once
    /// its heartbeat runs out, within 4 more intervals (so 4 to 8 intervals, 1 to 2 minutes by
    /// default, after the hold began); each may reconnect later; and every new connection is
    /// refused at once with `server-full`
    /// ("the room is not taking anyone in ...") instead of waiting unread until its handshake
    /// times out. Once the consumer takes the buffer down to half, members count as heard while
    /// held again and newcomers are let in. A shorter pause costs nobody anything; a newcomer
    /// that arrives during it waits, unread, for up to its handshake timeout (10 s).
    ///
    /// - Important: one task iterates at a time. A cancelled `next()` returns nil and takes no
    ///   event: what was buffered stays for the next call.
    public var events: Events { Events(executor: scheduler, buffer: { [self] in eventBuffer }) }

    /// See `RoomServer.events`.
    public typealias Events = EventSequence<Event>
}
