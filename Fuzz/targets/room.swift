// Fuzz target: room commands, member names and inbox names (MessagingCore), built with
// Sources/MessagingCore. Properties: no crash; a sanitised inbox name is never empty, never
// "." or "..", holds no "/" or control character and fits in 255 bytes, so a peer cannot
// make the receiver write outside its inbox.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoom(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    _ = try? RoomCommand(parsing: text, peerInSend: count % 2 == 0)
    _ = Roster.problem(inName: text)
    let name = InboxName.sanitized(text)
    precondition(!name.isEmpty && name != "." && name != ".." && !name.contains("/"), "unsafe inbox name \(name)")
    precondition(name.utf8.count <= 255, "inbox name too long")
    precondition(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(name)")
    var roster = Roster()
    let first = roster.join(id: 1, requested: text)
    let second = roster.join(id: 2, requested: text)
    precondition(first.lowercased() != second.lowercased(), "two members share a name")
    return 0
}
