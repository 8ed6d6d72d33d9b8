// Fuzz target: what a server remembers of clients' numbered text (TextSessions, MessagingCore),
// built with Sources/MessagingCore. The input is a sequence of 4-byte operations on 8 sessions
// held by 4 connections from 2 hosts, with numbers 0-31 or near the 2^63 limit, so that they
// collide: attach, detach, or offer a TEXT number. Properties: while a session is remembered,
// no number is accepted twice, every number at or above the highest accepted one (and below
// the limit) is accepted (nothing new is dropped), a session held by one connection cannot be
// attached by another, and the table never holds more idle sessions than its capacity.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessions(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let capacity = 8 // every session fits: a forgotten one would start afresh, which the model does not follow
    var sessions = TextSessions(capacity: capacity)
    var accepted = Set<UInt64>()              // session << 8 | low bits of the number
    var highest: [UInt64: UInt64] = [:]
    var holder: [UInt64: Int] = [:]           // who holds each session now
    var index = 0
    while index + 4 <= bytes.count {
        let session = UInt64(bytes[index + 1] % 8)
        let connection = Int(bytes[index + 2] % 4)
        let raw = UInt64(bytes[index + 3])
        let number = raw < 0xF0 ? raw % 32 : TextSessions.sequenceLimit - 8 + (raw - 0xF0) // up to limit + 7
        switch bytes[index] % 3 {
        case 0:
            do {
                try sessions.attach(session, next: number, holder: connection, address: connection < 2 ? "a" : "b")
                precondition(holder[session] == nil || holder[session] == connection, "session \(session) taken over")
                holder[session] = connection
            } catch .inUse {
                precondition(holder[session] != nil && holder[session] != connection, "session \(session) refused although free")
            } catch {
                precondition(number >= TextSessions.sequenceLimit, "next \(number) refused although below the limit")
            }
        case 1:
            if holder[session] == connection { holder[session] = nil }
            sessions.detach(session, holder: connection)
        default:
            guard holder[session] != nil else { break } // the server only numbers text of held sessions
            let fresh = sessions.accept(number, in: session)
            let key = session << 8 | (number & 0xFF)
            if fresh {
                precondition(number < TextSessions.sequenceLimit, "TEXT \(number) past the limit accepted")
                precondition(accepted.insert(key).inserted, "TEXT \(number) of session \(session) accepted twice")
                highest[session] = max(highest[session] ?? 0, number)
            } else if let top = highest[session], number < TextSessions.sequenceLimit {
                precondition(number <= top, "TEXT \(number) of session \(session) dropped although newer than \(top)")
            }
        }
        // Forgotten sessions start afresh: what the model remembers of them goes too.
        let held = holder.count
        precondition(sessions.count <= capacity + held, "\(sessions.count) sessions remembered, capacity \(capacity) + \(held) held")
        index += 4
    }
    return 0
}
