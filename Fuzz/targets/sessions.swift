// Fuzz target: what a server remembers of clients' numbered text (TextSessions, MessagingCore),
// built with Sources/MessagingCore. The input is a sequence of 3-byte operations: open a
// session at a number, or offer a TEXT number in a session (8 sessions, numbers 0-31, so that
// they collide). Property: while a session is remembered, no number is accepted twice, and
// every number at or above the highest accepted one is accepted (nothing new is dropped).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessions(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    var sessions = TextSessions(capacity: 64) // more than 8: nothing is forgotten here
    var accepted = Set<UInt64>()              // session << 8 | number
    var highest: [UInt64: UInt64] = [:]
    var index = 0
    while index + 3 <= bytes.count {
        let session = UInt64(bytes[index + 1] % 8)
        let number = UInt64(bytes[index + 2] % 32)
        if bytes[index] % 2 == 0 {
            sessions.open(session, next: number)
        } else {
            let fresh = sessions.accept(number, in: session)
            if fresh {
                precondition(accepted.insert(session << 8 | number).inserted, "TEXT \(number) of session \(session) accepted twice")
                highest[session] = max(highest[session] ?? 0, number)
            } else if let top = highest[session] {
                precondition(number <= top, "TEXT \(number) of session \(session) dropped although newer than \(top)")
            }
        }
        index += 3
    }
    return 0
}
