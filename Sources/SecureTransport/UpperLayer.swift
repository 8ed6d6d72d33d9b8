import TransportPOSIX

/// What the layer above a stream handed it at `start` and `whenDrained`: where bytes, the
/// end and drains go.
struct UpperLayer {
    var onBytes: ([UInt8]) -> Void = { _ in }
    var onClose: (Connection.CloseReason) -> Void = { _ in }
    var onDrained: (() -> Void)?

    /// Tells the layer above that the stream ended, once: the handlers are let go first, so
    /// nothing reaches it afterwards.
    mutating func end(_ reason: Connection.CloseReason) {
        let handler = onClose
        self = UpperLayer()
        handler(reason)
    }
}
