import MessagingCore
import TransportPOSIX

/// The far end of an in-memory stream, driven by hand: it sends whatever bytes or messages a
/// test or fuzzer wants (a hostile peer), and checks every frame it receives: each must fit
/// the protocol's limit (1 MiB of payload) and decode. Broken frames are kept in `faults`.
///
/// - Important: use from the scheduler's thread only.
public final class RawPeer {
    public let stream: InMemoryStream
    /// Every message received, in order (when `keepsMessages`).
    public private(set) var messages: [Message] = []
    /// How many frames arrived.
    public var frameCount: Int { checker.frameCount }
    /// What was wrong with the frames received; empty when every frame was sound.
    public var faults: [String] { checker.faults }
    /// Why the stream closed, once it has.
    public private(set) var closeReason: Connection.CloseReason?
    /// For the test's own bookkeeping: whether it paused reading.
    public var isPaused = false
    private let keepsMessages: Bool
    private var checker = FrameChecker()
    /// What this peer sent before its HELLO was whole (nil once it is, or once it sent something else).
    private var firstFrame: FrameDecoder? = FrameDecoder(maximumPayload: Frame.maximumPayload)

    /// Starts reading `stream` at once.
    /// - Parameter keepsMessages: false to only count and check frames (long fuzz inputs).
    public init(_ stream: InMemoryStream, keepsMessages: Bool = true) {
        self.stream = stream
        self.keepsMessages = keepsMessages
        stream.start(onBytes: { [weak self] bytes in self?.received(bytes) }, onClose: { [weak self] reason in self?.closeReason = reason })
    }

    /// Sends one message, framed.
    @discardableResult
    public func send(_ message: Message) -> Bool {
        var bytes: [UInt8] = []
        message.encode(into: &bytes)
        return send(raw: bytes)
    }

    /// Sends bytes as they are: garbage, partial or oversize frames.
    @discardableResult
    public func send(raw bytes: [UInt8]) -> Bool {
        followFirstFrame(bytes)
        return stream.send(bytes)
    }

    /// Follows what this peer sends until its HELLO is whole: its capabilities say how PRESENCE
    /// comes back. The frames of the room-code exchange may come first; anything else first
    /// is refused by the other end, and nothing follows.
    private func followFirstFrame(_ bytes: [UInt8]) {
        guard var decoder = firstFrame else { return }
        firstFrame = nil
        decoder.feed(bytes)
        do throws(ProtocolError) {
            while let frame = try decoder.next() {
                switch try Message(decoding: frame) {
                case .hello(let hello):
                    checker.readerAdvertisesMemberKeys = hello.capabilities.contains(.memberKeys)
                    return
                case .codeStart, .codeConfirm: continue
                default: return
                }
            }
            firstFrame = decoder
        } catch {} // not a frame: the other end refuses it, and nothing follows
    }

    private func received(_ bytes: [UInt8]) {
        let received = checker.feed(bytes)
        if keepsMessages { messages.append(contentsOf: received) }
    }
}
