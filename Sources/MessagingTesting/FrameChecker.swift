import MessagingCore

/// Follows a byte stream written by the code under test and checks each frame: it must fit
/// the protocol's limit (1 MiB of payload plus the 8-byte header) and decode. What was wrong
/// is kept in `faults`; after the first fault the stream cannot be followed any more.
public struct FrameChecker {
    /// How many whole frames arrived.
    public private(set) var frameCount = 0
    /// What was wrong with the frames; empty when every frame was sound.
    public private(set) var faults: [String] = []
    /// Whether the side that reads this stream advertised `.memberKeys` in its HELLO (set by
    /// whoever sends that HELLO, e.g. `RawPeer`): PRESENCE then carries keys once the
    /// stream's own first HELLO advertised them too.
    public var readerAdvertisesMemberKeys = false
    private var writerAdvertisesMemberKeys: Bool?
    private var decoder = FrameDecoder(maximumPayload: Frame.maximumPayload)

    public init() {}

    /// Takes the next bytes of the stream; returns the messages they completed.
    public mutating func feed(_ bytes: [UInt8]) -> [Message] {
        guard faults.isEmpty else { return [] }
        decoder.feed(bytes)
        var messages: [Message] = []
        while true {
            do throws(ProtocolError) {
                guard let frame = try decoder.next() else { return messages }
                frameCount += 1
                let message = try Message(decoding: frame, memberKeys: readerAdvertisesMemberKeys && writerAdvertisesMemberKeys == true)
                if case .hello(let hello) = message, writerAdvertisesMemberKeys == nil {
                    writerAdvertisesMemberKeys = hello.capabilities.contains(.memberKeys)
                }
                messages.append(message)
            } catch {
                faults.append("frame \(frameCount): \(error)")
                return messages
            }
        }
    }
}
