/// Which host a link-local peer's room-code guess is charged to (issue 13, reviews attacks14a
/// and attacks14v). The neighbour table can be written by any machine on the link (an
/// unsolicited NA, an NS with a source link-layer option), and the room's frames go to the
/// hardware address in it. So the entry is read twice, at accept and at CODE_START, and its
/// hardware address counts only when the entry stood unchanged between the two reads: a machine
/// that points its own address at another machine's hardware address stops receiving the
/// room's frames (the TLS handshake, which comes between the reads) until it points it back.
public enum NeighbourAttribution: Sendable, Hashable {
    /// The entry stood unchanged from accept to CODE_START: charged to this machine.
    case hardware([UInt8])
    /// The entry changed, or either read found no usable hardware address: charged to the
    /// interface's bucket for such peers, never to a machine.
    case unsettled
    /// The table could not be read, or the peer's interface is not known: charged to the
    /// exact address.
    case exactAddress

    /// The decision, pure. Charged to the hardware address only when all hold:
    /// - both reads found a valid entry with a hardware address, and the two are equal;
    /// - the entry's last change as computed at CODE_START is not later than as computed at
    ///   accept by more than `margin` (two ticks): no change between the reads;
    /// - at accept, the entry's last change was not later than the accept by more than `margin`
    ///   (it was not changed between the accept and the first read).
    /// - Parameters:
    ///   - acceptedAt: when the connection was accepted (the real clock).
    ///   - atAccept: the read at accept; nil when it found no usable entry.
    ///   - atCodeStart: the read at CODE_START; nil when it found no usable entry.
    ///   - ticksPerSecond: `sysconf(_SC_CLK_TCK)`, the unit of the entries' ages.
    public static func decide(acceptedAt: ContinuousClock.Instant, atAccept: NeighbourSighting?, atCodeStart: NeighbourSighting?,
                              ticksPerSecond: Int) -> NeighbourAttribution {
        guard let atAccept, let atCodeStart, ticksPerSecond > 0, atAccept.hardware == atCodeStart.hardware else { return .unsettled }
        let margin = margin(ticksPerSecond: ticksPerSecond)
        guard atCodeStart.changedAt - atAccept.changedAt <= margin, atAccept.changedAt - acceptedAt <= margin else { return .unsettled }
        return .hardware(atAccept.hardware)
    }

    /// How far apart one instant of change can look when computed from two reads: the kernel
    /// rounds an entry's age down to a tick and counts in jiffies (10 ms at `HZ=100`, 4 ms at
    /// 250, 1 ms at 1000), so a computed instant is off by at most a tick and a jiffy one way
    /// and a jiffy the other: under two ticks for any `HZ` of at least `USER_HZ`.
    static func margin(ticksPerSecond: Int) -> Duration { Duration.seconds(1) / ticksPerSecond * 2 }
}

/// One read of a neighbour entry: its hardware address and when the kernel last changed it
/// (the read's instant minus the entry's age).
public struct NeighbourSighting: Sendable, Hashable {
    public let hardware: [UInt8]
    public let changedAt: ContinuousClock.Instant

    public init(hardware: [UInt8], changedAt: ContinuousClock.Instant) {
        self.hardware = hardware
        self.changedAt = changedAt
    }

    /// What `entry`, read at `readAt`, says; nil when it is missing, not valid (incomplete,
    /// failed), or has no hardware address or age.
    /// - Parameter ticksPerSecond: `sysconf(_SC_CLK_TCK)`, the unit of `updatedTicksAgo`.
    public init?(entry: NeighbourQuery.Entry?, readAt: ContinuousClock.Instant, ticksPerSecond: Int) {
        guard let entry, entry.isValid, let hardware = entry.linkLayerAddress, let ticks = entry.updatedTicksAgo,
              ticksPerSecond > 0 else { return nil }
        self.init(hardware: hardware, changedAt: readAt - Duration.seconds(1) / ticksPerSecond * Int(ticks))
    }
}
