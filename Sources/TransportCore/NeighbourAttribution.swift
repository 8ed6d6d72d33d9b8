/// Which host a link-local peer's room-code guess is charged to (issue 13, review attacks14a).
/// The neighbour table can be written by any machine on the link (an unsolicited NA, an NS
/// with a source link-layer option), so its hardware address is trusted only when the entry
/// did not change while the connection was open: a machine that points its own address at
/// another machine's hardware address gets the room's replies sent there, so to talk to the
/// room and still be charged as that machine it must change the entry during the connection.
public enum NeighbourAttribution: Sendable, Hashable {
    /// The entry stood unchanged since before the connection: charged to this machine.
    case hardware([UInt8])
    /// The entry changed during the connection, or has no usable hardware address: charged
    /// to the interface's bucket for such peers, never to a machine.
    case unsettled
    /// The table could not be read: charged to the exact address.
    case exactAddress

    /// The decision, pure.
    /// - Parameters:
    ///   - entry: the kernel's entry for the peer's address, nil when it has none.
    ///   - connectionAge: how long ago the connection was accepted.
    ///   - ticksPerSecond: `sysconf(_SC_CLK_TCK)`, the unit of `updatedTicksAgo`.
    /// The kernel rounds the entry's age down to a tick and keeps time in jiffies (at least
    /// 4 ms apart), so an entry last changed just before the accept may look up to a tick and a
    /// jiffy younger than the connection: that much is allowed (`margin`).
    public static func decide(entry: NeighbourQuery.Entry?, connectionAge: Duration, ticksPerSecond: Int) -> NeighbourAttribution {
        guard let entry, entry.isValid, let hardware = entry.linkLayerAddress, let ticks = entry.updatedTicksAgo,
              ticksPerSecond > 0 else { return .unsettled }
        let tick = Duration.seconds(1) / ticksPerSecond
        let entryAge = tick * Int(ticks)
        return entryAge + margin(tick: tick) >= connectionAge ? .hardware(hardware) : .unsettled
    }

    /// A tick (the kernel's rounding down) and 4 ms (a jiffy at `HZ=250`; 1 ms at 1000).
    static func margin(tick: Duration) -> Duration { tick + .milliseconds(4) }
}
