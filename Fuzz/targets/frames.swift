// Fuzz target: the frame decoder and every message parser (MessagingCore).
// Built by Scripts/fuzz together with Sources/MessagingCore into one module.
//
// The first byte chooses how the rest is split into reads, so frames split across reads are
// explored too. Properties checked: no crash; no allocation beyond the protocol's limit (the
// fuzzer runs with a malloc limit); every message that decodes re-encodes to a frame that
// decodes to the same message (PRESENCE read both with and without member keys); a second
// decoder fed the same reads and decoding in place (`nextMessage`, as PeerLink does) yields
// the same messages and errors, frame for frame.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard let chunk = bytes.first.map({ Int($0) + 1 }) else { return 0 }
    var decoder = FrameDecoder()
    var inPlace = FrameDecoder()
    let memberKeysInPlace = count > 1 && start[1] & 1 == 1
    var offset = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        decoder.feed(bytes[offset..<end])
        inPlace.feed(bytes[offset..<end])
        offset = end
        while true {
            let frame: Frame?
            do { frame = try decoder.next() } catch {
                // oversize: the stream is rejected, by both
                do { _ = try inPlace.nextMessage(memberKeys: memberKeysInPlace); preconditionFailure("in place took an oversize frame") }
                catch { return 0 }
            }
            let decoded = try? inPlace.nextMessage(memberKeys: memberKeysInPlace)
            guard let frame else {
                precondition(decoded == nil, "in place decoded a frame that is not whole")
                break
            }
            guard let decoded else { preconditionFailure("in place found no frame") }
            precondition(decoded.payloadCount == frame.payload.count, "in place read another payload")
            switch (Result { () throws(ProtocolError) in try Message(decoding: frame, memberKeys: memberKeysInPlace) }, decoded.message) {
            case (.success(let a), .success(let b)): precondition(a == b, "in place decoded \(b), not \(a)")
            case (.failure(let a), .failure(let b)): precondition(a.code == b.code && a.message == b.message, "in place failed otherwise")
            default: preconditionFailure("in place disagreed on frame 0x\(String(frame.type, radix: 16))")
            }
            // Both readings of PRESENCE: names only, and names with keys (capability 64).
            for memberKeys in [false, true] {
                if let message = try? Message(decoding: frame, memberKeys: memberKeys) {
                    let again = try? Message(decoding: message.frame, memberKeys: memberKeys)
                    precondition(again == message, "round trip changed \(message)")
                }
            }
        }
    }
    return 0
}
