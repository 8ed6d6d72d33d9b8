import Synchronization
import TransportCore
import TransportPOSIX

/// After a failed handshake or a refused plaintext client, the connection finishes and keeps
/// its socket a moment (`TLSStream.lingerAfterFailure`) so that the alert or the refusal can
/// leave. Such connections no longer count as a room's connections, so a peer that fails
/// handshakes as fast as it can would hold sockets at the rate it connects: at most `limit`
/// linger at once in a process; past it a connection is closed at once (its alert may be
/// lost; the socket is not).
enum Lingering {
    /// Connections lingering at once, at most.
    static let limit = 256
    private static let count = Atomic<Int>(0)
    /// Connections lingering now.
    static var current: Int { count.load(ordering: .relaxed) }

    /// Finishes `stream` and closes it after the linger time, or at once when `limit`
    /// connections linger already.
    static func finishThenClose(_ stream: any ByteStream, scheduler: any Scheduler) {
        let now = count.wrappingAdd(1, ordering: .relaxed).newValue
        guard now <= limit else {
            count.wrappingSubtract(1, ordering: .relaxed)
            return stream.close()
        }
        stream.finish()
        scheduler.schedule(after: TLSStream.lingerAfterFailure) {
            count.wrappingSubtract(1, ordering: .relaxed)
            stream.close()
        }
    }
}
