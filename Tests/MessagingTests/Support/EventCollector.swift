import Messaging

/// Takes a client's events from its async sequence, as a consumer does, into `events`, and
/// sets `ended` when the sequence ends.
func collectEvents(of client: RoomClient, into events: Locked<[RoomClient.Event]>, ended: Locked<Bool>? = nil) {
    Task {
        for await event in client.events { events.withLock { $0.append(event) } }
        ended?.withLock { $0 = true }
    }
}
