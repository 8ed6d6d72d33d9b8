import TransportPOSIX

/// What the layer above a stream handed it at `start` and `whenDrained`: where bytes, the
/// end and drains go.
struct UpperLayer {
    var onBytes: ([UInt8]) -> Void = { _ in }
    var onClose: (Connection.CloseReason) -> Void = { _ in }
    var onDrained: (() -> Void)?
    /// The low-water mark `onDrained` was set with (`ByteStream.whenDrained(toAtMost:_:)`).
    var drainMark = 0

    /// Lets the handlers go, so that nothing reaches the layer above afterwards, and returns
    /// the one that tells it the stream ended. The caller calls it once this access is over:
    /// that handler may call back into the stream (e.g. `whenDrained(nil)`), which sets these
    /// handlers again, and doing so inside a mutating call on them breaks exclusive access.
    mutating func takeEnd() -> (Connection.CloseReason) -> Void {
        let handler = onClose
        self = UpperLayer()
        return handler
    }
}
