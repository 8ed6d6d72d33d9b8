extension RoomClient {
    /// The client's events, in the order they happened, as an async sequence: iterate it from
    /// one task while the session runs. It ends once the session's outcome is decided (`run()`
    /// returns it), the connection is gone and every event before that was taken.
    ///
    /// Back-pressure: events wait in a buffer of `Options.eventBufferLimit` events and
    /// `Options.eventBufferBytes` (by `Event.weight`). When either is reached,
    /// the client stops reading from the server (the frames stay in the kernel and in the
    /// server's outbox) and reads again once the consumer took it down to half. Nothing is
    /// dropped: the few events that come without reading (a line reported as not sent, a
    /// reconnect) are buffered beyond the limit. A consumer that takes nothing for as long as
    /// the heartbeat allows (4 intervals) looks to the client like a silent server: the link
    /// ends and the client reconnects.
    ///
    /// - Important: one task iterates at a time. A cancelled `next()` returns nil and takes no
    ///   event: what was buffered stays for the next call.
    public var events: Events { Events(executor: executor, buffer: { [self] in eventBuffer }) }

    /// See `RoomClient.events`.
    public typealias Events = EventSequence<Event>
}

extension RoomClient.Event {
    /// About the bytes this event holds, for `Options.eventBufferBytes`: the text of lines,
    /// names and reasons, 64 bytes for each name of a PRESENCE (the string and its key), and
    /// 64 for the event itself.
    var weight: Int {
        switch self {
        case .text(let from, let to, let text): 64 + from.utf8.count + (to?.utf8.count ?? 0) + text.utf8.count
        case .history(let from, let text, _): 64 + from.utf8.count + text.utf8.count
        case .presence(_, let names, _): names.reduce(64) { $0 + 64 + $1.utf8.count }
        default: 64
        }
    }
}
