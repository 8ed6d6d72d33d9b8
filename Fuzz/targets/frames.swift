// Fuzz target: the frame decoder and every message parser (MessagingCore).
// Built by Scripts/fuzz together with Sources/MessagingCore into one module.
//
// The first byte chooses how the rest is split into reads, so frames split across reads are
// explored too. Properties checked: no crash; no allocation beyond the protocol's limit (the
// fuzzer runs with a malloc limit); every message that decodes re-encodes to a frame that
// decodes to the same message (PRESENCE read both with and without member keys).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard let chunk = bytes.first.map({ Int($0) + 1 }) else { return 0 }
    var decoder = FrameDecoder()
    var offset = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        decoder.feed(bytes[offset..<end])
        offset = end
        while true {
            let frame: Frame?
            do { frame = try decoder.next() } catch { return 0 } // oversize: the stream is rejected
            guard let frame else { break }
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
