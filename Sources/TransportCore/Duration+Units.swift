extension Duration {
    /// The whole duration in nanoseconds (for Dispatch deadlines).
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// "250 ms", "2 s", "2.5 s": for messages.
    public var secondsText: String {
        let ms = nanoseconds / 1_000_000
        if ms < 1000 { return "\(ms) ms" }
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms / 1000).\(ms % 1000 / 100) s"
    }
}
