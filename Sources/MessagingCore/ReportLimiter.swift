/// How many lines a peer can make a tool print about something it does again and again
/// (connections refused, ERROR frames it sends): up to `burst` in each `period`; the rest are
/// counted, and the count is reported once the period is over.
///
/// Pure: the caller passes the time in.
public struct ReportLimiter: Sendable {
    public let burst: Int
    public let period: Duration
    private var windowStart: ContinuousClock.Instant?
    private var reported = 0
    private var suppressed = 0

    public init(burst: Int = 20, period: Duration = .seconds(10)) {
        self.burst = max(1, burst)
        self.period = period
    }

    /// Whether to print this occurrence; a suppressed one is counted.
    public mutating func admit(at now: ContinuousClock.Instant) -> Bool {
        if let start = windowStart, now < start + period {
            guard reported < burst else {
                suppressed += 1
                return false
            }
        } else {
            windowStart = now
            reported = 0
        }
        reported += 1
        return true
    }

    /// When the suppressed occurrences should be summarised (the end of the current period),
    /// or nil when none were suppressed.
    public var summaryDue: ContinuousClock.Instant? {
        guard suppressed > 0, let start = windowStart else { return nil }
        return start + period
    }

    /// How many were suppressed since the last call; starts counting again.
    public mutating func takeSuppressed() -> Int {
        defer { suppressed = 0 }
        return suppressed
    }
}
