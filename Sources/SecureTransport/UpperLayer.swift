import TransportPOSIX

/// What the layer above a stream handed it at `start` and `whenDrained`: where bytes, the
/// end and drains go.
struct UpperLayer {
    var onBytes: ([UInt8]) -> Void = { _ in }
    var onClose: (Connection.CloseReason) -> Void = { _ in }
    var onDrained: (() -> Void)?

    /// Lets the handlers go, so nothing reaches the layer above afterwards, and returns the one
    /// that tells it the stream ended. The caller calls that after this returns, never inside:
    /// the layer above may call back into the stream (`whenDrained`, `close`), which changes
    /// this value, and it must not be in the middle of a change then (Swift's exclusive access
    /// traps: svc-publish crashed when a member left while a file relay waited on it).
    mutating func detach() -> (Connection.CloseReason) -> Void {
        let handler = onClose
        self = UpperLayer()
        return handler
    }
}
