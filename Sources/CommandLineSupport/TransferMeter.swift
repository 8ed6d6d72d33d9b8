/// The progress of one transfer as pv and rsync show it: bytes so far, a smoothed rate, the
/// time elapsed, an estimate of the time left, and whether it stalled.
///
/// A value given the time on every call (an injected clock): the tools pass
/// `ContinuousClock.now`, tests pass instants they advance themselves. It does no I/O.
///
/// The rate is sampled every `sampleInterval` and smoothed exponentially with a time constant
/// of `smoothing`, so that one fast or slow chunk does not make the estimate jump, while a
/// lasting change shows within a few seconds. Only the bytes of this attempt count: a
/// transfer resumed at N is measured from N.
public struct TransferMeter: Sendable {
    /// How often the rate is sampled: 0.5 s.
    public static let sampleInterval: Duration = .milliseconds(500)
    /// The time constant of the smoothing: after this long at a new rate, about two thirds of
    /// the change shows: 3 s.
    public static let smoothing: Duration = .seconds(3)
    /// How long without a byte before a transfer counts as stalled: 5 s.
    public static let stallAfter: Duration = .seconds(5)

    /// The size of the whole file.
    public let total: UInt64
    /// Where this attempt started: more than 0 when it resumed an earlier one.
    public let startOffset: UInt64
    /// When this attempt started.
    public let started: ContinuousClock.Instant
    /// Bytes done so far (from the start of the file, not of this attempt).
    public private(set) var done: UInt64
    /// When `done` last grew (or the attempt started).
    public private(set) var lastProgress: ContinuousClock.Instant
    /// Bytes a second, smoothed; nil until a first sample interval has passed.
    private var smoothedRate: Double?
    private var sampleStart: ContinuousClock.Instant
    private var sampleDone: UInt64

    /// - Parameters:
    ///   - total: the size of the file.
    ///   - startOffset: the bytes already there when this attempt started (resuming).
    ///   - now: the current time.
    public init(total: UInt64, startOffset: UInt64 = 0, at now: ContinuousClock.Instant) {
        self.total = total
        self.startOffset = min(startOffset, total)
        started = now
        done = self.startOffset
        lastProgress = now
        sampleStart = now
        sampleDone = self.startOffset
    }

    /// Records that `done` bytes of the file are through at `now`. A count that goes back is
    /// taken as no progress, one beyond the total as the total.
    public mutating func record(_ done: UInt64, at now: ContinuousClock.Instant) {
        let done = min(max(done, self.done), total)
        if done > self.done { lastProgress = now }
        self.done = done
        sample(upTo: now)
    }

    /// Folds the bytes since the last sample into the smoothed rate, once a sample interval
    /// has passed.
    private mutating func sample(upTo now: ContinuousClock.Instant) {
        let interval = now - sampleStart
        guard interval >= Self.sampleInterval else { return }
        let seconds = interval.seconds
        let rate = Double(done - sampleDone) / seconds
        if let smoothed = smoothedRate {
            smoothedRate = smoothed + min(1, seconds / Self.smoothing.seconds) * (rate - smoothed)
        } else {
            smoothedRate = rate
        }
        sampleStart = now
        sampleDone = done
    }

    /// What to show at `now`.
    public func snapshot(at now: ContinuousClock.Instant) -> Snapshot {
        var meter = self
        meter.sample(upTo: now)
        let elapsed = max(.zero, now - started)
        let complete = done >= total
        let rate: Double?
        if complete {
            // Done: the average of the whole attempt, the figure worth remembering.
            rate = elapsed > .zero ? Double(done - startOffset) / elapsed.seconds : nil
        } else {
            rate = meter.smoothedRate
        }
        var remaining: Duration?
        if complete {
            remaining = .zero
        } else if let rate, rate > 0 {
            let seconds = Double(total - done) / rate
            remaining = seconds < Snapshot.longestEstimate.seconds ? .milliseconds(Int64(seconds * 1000)) : Snapshot.longestEstimate
        }
        let quiet = now - lastProgress
        return Snapshot(done: done, total: total, startOffset: startOffset, elapsed: elapsed, bytesPerSecond: rate,
                        remaining: remaining, stalledFor: !complete && quiet >= Self.stallAfter ? quiet : nil)
    }

    /// The state of a transfer at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Estimates are capped here (99:59:59); a longer one is shown as more than that.
        public static let longestEstimate: Duration = .seconds(99 * 3600 + 59 * 60 + 59)

        public let done: UInt64
        public let total: UInt64
        public let startOffset: UInt64
        /// Since this attempt started.
        public let elapsed: Duration
        /// The smoothed rate (the average over the attempt once complete); nil while unknown.
        public let bytesPerSecond: Double?
        /// The estimated time left (ETA); nil while unknown, `.zero` once complete, at most
        /// `longestEstimate`.
        public let remaining: Duration?
        /// Set when nothing came for `TransferMeter.stallAfter` or longer: how long.
        public let stalledFor: Duration?

        /// Whole percent done, 0 to 100 (100 only when complete; an empty file is complete).
        public var percent: Int {
            guard total > 0 else { return 100 }
            return done >= total ? 100 : min(99, Int(Double(done) / Double(total) * 100))
        }

        public var isComplete: Bool { done >= total }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// How transfers are written for people: binary units (1 KiB = 1,024 bytes), one decimal,
/// and times as `m:ss` or `h:mm:ss`.
public enum TransferFormat {
    /// `512 B`, `1.0 KiB`, `12.3 MiB`, `1.1 GiB` ... up to EiB.
    public static func bytes(_ count: UInt64) -> String {
        amount(Double(count))
    }

    /// `12.3 MiB/s`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        amount(max(0, bytesPerSecond)) + "/s"
    }

    private static func amount(_ value: Double) -> String {
        guard value >= 1024 else { return "\(Int(value.rounded(.down))) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var scaled = value / 1024
        var unit = 0
        // Move up when the value, rounded to one decimal, would read 1024.0 or more.
        while (scaled * 10).rounded() >= 10240, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        let tenths = Int((scaled * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// Whole seconds as `0:42`, `12:05` or `1:02:03` (hours are not capped).
    public static func duration(_ duration: Duration) -> String {
        let total = max(0, duration.components.seconds)
        let hours = total / 3600
        let minutes = total / 60 % 60
        let seconds = total % 60
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(seconds))" : "\(minutes):\(two(seconds))"
    }
}
