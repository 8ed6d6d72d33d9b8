// Fuzz target: the room-code exchange's state machines and its guessing limit (MessagingCore:
// RoomCodeResponderSteps, RoomCodeInitiatorSteps, GuessLimiter), built with Sources/MessagingCore.
// The input is a sequence of 3-byte operations: the first byte picks a machine and a message (or
// a verdict, a clock step, a guess), the others its sizes, codes and names. Properties:
//   responder: it answers CODE_START at most once and checks a tag at most once, after an answer;
//     a HELLO counts as passed only after a right tag; after a refusal it ignores everything;
//     frames of the exchange are never handed on as ordinary ones.
//   initiator: it starts at most once (on the room's HELLO) and finishes at most once, after
//     starting; before a right tag nothing but HELLO and GOODBYE is handed on; an ERROR before
//     the proof is a refusal (code-exchange or too-many-attempts), never a wrong code.
//   limiter: no host gets more than `perAddress` guesses, nor the room more than `overall` plus
//     one reserve guess per 12 s, within any minute (guesses given back not counted); the
//     tables never pass their bounds.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoomCode(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    var responder = RoomCodeResponderSteps(unavailable: bytes.first.map { $0 & 0x80 != 0 } == true ? "no code in this room" : nil)
    var initiator = RoomCodeInitiatorSteps(usesCode: bytes.first.map { $0 & 0x40 == 0 } ?? true)
    var answered = false, checked = false, rightTag = false, refused = false
    var started = false, finished = false, proved = false, initiatorEnded = false
    var limits = GuessLimiter.Limits()
    limits.trackedAddresses = 6
    limits.trackedKeys = 6
    var limiter = GuessLimiter(limits: limits)
    let origin = ContinuousClock.now
    var now = origin
    var guesses: [(address: String, at: ContinuousClock.Instant, reserve: Bool, attempt: GuessLimiter.Attempt)] = []
    var index = 1
    while index + 3 <= bytes.count {
        let (op, a, b) = (bytes[index], bytes[index + 1], bytes[index + 2])
        index += 3
        let message = makeMessage(op % 10, a, b)
        switch op / 10 % 5 {
        case 0:
            let step = responder.receive(message)
            if refused { precondition(step == .ignore, "a refused exchange went on: \(step)") }
            switch step {
            case .answer:
                precondition(!answered, "CODE_START answered twice")
                answered = true
            case .check:
                precondition(answered && !checked, "a tag checked twice or without an answer")
                checked = true
                responder.checked(a & 1 == 0)
                rightTag = a & 1 == 0
                if !rightTag { refused = true }
            case .hello(_, let passed):
                precondition(!passed || rightTag, "HELLO counted as passed without a right tag")
                if b & 1 == 0 { responder.joined() }
            case .other(let other):
                switch other {
                case .codeStart, .codeReply, .codeConfirm: preconditionFailure("a frame of the exchange handed on: \(other)")
                default: break
                }
            case .refuse, .peerFailed: refused = true
            case .ignore: break
            }
        case 1:
            let step = initiator.receive(message)
            if initiatorEnded { precondition(step == .ignore, "an ended exchange went on: \(step)") }
            switch step {
            case .start:
                precondition(!started, "started twice")
                started = true
            case .finish:
                precondition(started && !finished, "finished twice or before starting")
                finished = true
                initiator.checked(a & 1 == 0)
                proved = a & 1 == 0
                if !proved { initiatorEnded = true }
            case .other(let other):
                if initiator.state != .notUsed && !proved {
                    switch other {
                    case .hello, .goodbye: break
                    default: preconditionFailure("\(other) handed on before the room proved the code")
                    }
                }
            case .refusedBeforeProof(let error):
                precondition(error.code == .codeExchange || error.code == .tooManyAttempts, "an unproved room's ERROR became \(error.code)")
                initiatorEnded = true
            case .refuse: initiatorEnded = true
            case .ignore: break
            }
        case 2:
            now += .milliseconds(Int(a) * 250 + Int(b))
        default:
            let address = "10.0.0.\(a % 8)"
            switch limiter.begin(address: address, key: "key\(b % 8)", listed: b & 0x80 != 0, at: now, random: { Double(a) / 255 }) {
            case .allowed(let attempt):
                if b & 0x80 == 0 { guesses.append((address, now, attempt.fromReserve, attempt)) }
                if b & 0x40 != 0 {
                    limiter.succeeded(attempt)
                    if b & 0x80 == 0 { guesses.removeLast() }
                }
            case .refused:
                break
            }
            let recent = guesses.filter { now - $0.at < limits.window }
            precondition(recent.filter { !$0.reserve }.count <= limits.overall, "the room let \(recent.count) guesses through in a minute")
            precondition(recent.filter(\.reserve).count <= 5, "the reserve gave more than 5 in a minute")
            for host in Set(recent.map(\.address)) {
                precondition(recent.filter { $0.address == host }.count <= limits.perAddress, "\(host) got more than \(limits.perAddress) guesses in a minute")
            }
            precondition(limiter.trackedCount.addresses <= 6 && limiter.trackedCount.keys <= 6, "the limiter's tables passed their bounds")
        }
    }
    return 0
}

/// A message of the exchange, or one around it, with sizes and codes from the input.
private func makeMessage(_ kind: UInt8, _ a: UInt8, _ b: UInt8) -> Message {
    switch kind {
    case 0: return .hello(.init(name: "m\(a)"))
    case 1: return .codeStart(share: Array(repeating: a, count: Int(b % 40)), associatedData: Array(repeating: b, count: Int(a % 20)))
    case 2: return .codeReply(share: Array(repeating: a, count: 32), tag: Array(repeating: b, count: 64), associatedData: [])
    case 3: return .codeConfirm(tag: Array(repeating: a, count: Int(b % 70)))
    case 4: return .error(code: UInt16(a % 24), message: "e")
    case 5: return .welcome(name: "w")
    case 6: return .goodbye(reason: "g")
    case 7: return .ping(token: UInt64(a))
    case 8: return .text(from: "f", to: "", text: "t")
    default: return .error(code: ProtocolError.Code.wrongRoomCode.rawValue, message: "your code is wrong")
    }
}
