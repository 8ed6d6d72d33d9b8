extension StandardInputLines {
    /// Standard input's lines as an async sequence, read on a thread of their own (see
    /// `start`): at most `bufferedLines` wait for the consumer, and while they do nothing more
    /// is read, so a consumer that waits (a room's `send`) slows a fast producer (a pipe) down
    /// without buffering it. The sequence ends at end of input or on a read error.
    ///
    /// - Important: call it once per process, and iterate from one task at a time. A cancelled
    ///   `next()` returns nil; the lines read meanwhile stay for the next call.
    public static func lines(maximumLineLength: Int = 65536, bufferedLines: Int = 64) -> Lines {
        let handoff = Handoff<String>(capacity: bufferedLines)
        start(maximumLineLength: maximumLineLength, onLine: { handoff.put($0) }, onEnd: { handoff.finish() })
        return Lines(handoff: handoff)
    }

    /// See `StandardInputLines.lines`.
    public struct Lines: AsyncSequence, Sendable {
        let handoff: Handoff<String>

        public func makeAsyncIterator() -> Iterator { Iterator(handoff: handoff) }

        /// The lines read and not yet taken (at most `bufferedLines`), removed: for a consumer
        /// that stops and reports what it will not use. The reading thread stays blocked.
        public func removeWaiting() -> [String] { handoff.removeWaiting() }

        /// Takes the next line, waiting for the reading thread.
        public struct Iterator: AsyncIteratorProtocol {
            let handoff: Handoff<String>

            /// The next line (without its ending), or nil at the end of input or when the
            /// calling task was cancelled.
            public mutating func next() async -> String? { await handoff.take() }
        }
    }
}
