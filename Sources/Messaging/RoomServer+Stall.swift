import MessagingCore
import TransportCore

/// A consumer of `events` that stops taking them: the room stops reading from its members
/// (back-pressure), but only for a bounded time, so a stalled consumer does not freeze the
/// room with nobody told.
extension RoomServer {
    /// How long the consumer may take nothing while the buffer presses before the room stops
    /// counting the members it does not read as alive: 4 heartbeat intervals (60 s by default).
    var consumerStallLimit: Duration { options.heartbeatInterval * 4 }

    /// What a newcomer is told while the consumer is stalled.
    static let stalledRefusal =
        "the room is not taking anyone in: the program hosting it has taken none of its events for a while; try again later"

    /// The event buffer filled (`full`) or the consumer took it down to half. On the scheduler.
    func consumerPressure(_ full: Bool) {
        scheduler.assertOnExecutor()
        for member in members.values {
            if full { member.link.holdReading(.consumer) } else { member.link.releaseReading(.consumer) }
        }
        stallCheck?.cancel()
        stallCheck = nil
        guard full else { return endStall() }
        stallCheck = scheduler.schedule(after: consumerStallLimit) { [weak self] in
            guard let self, eventBuffer.isPressing else { return }
            stallCheck = nil
            beginStall()
        }
    }

    /// The consumer took nothing for `consumerStallLimit`: from now on the members it does not
    /// read count as silent (each is dropped with `heartbeat-timeout` once its heartbeat runs
    /// out, within 4 intervals), and newcomers are refused at once with `server-full`.
    private func beginStall() {
        consumerStalled = true
        for member in members.values { member.link.heldForConsumerCountsAsHeard = false }
        // Buffered beyond the limit, as notes are: whoever takes events again learns why.
        onEvent(.note("the room's events were not taken for \(consumerStallLimit.secondsText): members it cannot read are dropped as silent and newcomers are refused until they are taken again"))
    }

    /// The consumer took events again: members count as heard from while held, newcomers are let in.
    private func endStall() {
        guard consumerStalled else { return }
        consumerStalled = false
        for member in members.values { member.link.heldForConsumerCountsAsHeard = true }
    }
}
