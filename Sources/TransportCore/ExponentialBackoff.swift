/// Delays for retrying: `initial`, doubled each attempt up to `maximum`, each shortened by a
/// random share of up to `jitter` so that many clients do not retry in step.
///
/// Pure: the caller sleeps; `random` is injected so tests get fixed delays.
public struct ExponentialBackoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    public let jitter: Double
    private var next: Duration

    public init(initial: Duration, maximum: Duration, jitter: Double = 0.2) {
        precondition(initial > .zero && maximum >= initial && (0...1).contains(jitter))
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        next = initial
    }

    /// The delay before the next attempt. `random` yields a value in 0..<1.
    public mutating func nextDelay(random: () -> Double = { Double.random(in: 0..<1) }) -> Duration {
        let base = next
        next = min(next * 2, maximum)
        return base * (1 - jitter * random())
    }

    /// Back to `initial`, after an attempt succeeded.
    public mutating func reset() { next = initial }
}
