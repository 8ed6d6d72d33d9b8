// Fuzz target `room-server`: a RoomServer with up to four hostile members and two
// well-behaved ones, all on in-memory streams with a manual clock, fed a *sequence* of
// operations. Each operation is one byte `kind | slot << 3` and its arguments:
//   0 connect hostile member `slot % 4` (argument: its read size, 1 << (b % 19) bytes); over
//     a plain stream when `slot / 4` is 0, else over a "secure" one whose key is one of three
//     (`slot / 4 % 3`), so hostile members share keys, replace each other and hold names
//     (the well-behaved members have keys of their own)
//   1 hostile member sends a frame: type (b < 0xE0: one of the 23 types, the room-code
//     exchange's among them: the room has a code; else b itself),
//     flags byte, 3-byte length (up to 1 MiB + 16: oversize too), then the payload (zeros
//     when the input ends first, so a short input can make a maximum-size frame)
//   2 hostile member sends n raw bytes (garbage, partial frames)
//   3 the clock moves on by b × 0.5 s (heartbeats after 15 s, handshake deadline 10 s)
//   4 hostile member closes (b even) or finishes (b odd)
//   5 hostile member stops or resumes reading (its outbox at the server fills up)
//   6 well-behaved member `slot % 2` joins, or says its next numbered line
//   7 hostile member sends HELLO with a name of b % 48 bytes from the input (b ≥ 0xC0: a
//     FILE_OFFER_TO good member `b % 2` instead, id and size from the input: a relayed file
//     that the well-behaved member accepts, and whose data the hostile one may then send)
// The room's bound on all outboxes together (`roomOutboxLimit`, 256 MiB in svc-publish) is
// 512 KiB, 1 MiB or 3 MiB by the input's length modulo 3 (not by a byte of it, so that the
// seeds and regressions kept before keep their meaning): six members cannot queue 256 MiB
// (4 MiB each at most), but paused members (op 5) sent text, history as they join or
// answers to their WHO pass these; and the three sit below, near and above what six members
// may hold under `RoomServer.outboxFloor` (1.5 MiB), for which nobody is dropped.
// Checked after every operation: nothing traps; every frame the server sends fits 1 MiB
// of payload and decodes; the open connections' outboxes together hold at most the limit,
// or none holds more than the floor (`checkOutboxBound`); a well-behaved member is dropped
// for the bound only once every hostile member the room counts as stalled (paused and over
// the floor for a second) is gone; each well-behaved member receives the other's lines at most
// once, and at the end every line sent while both were in the room exactly once; members
// that never answer PING are gone within two minutes (however they misbehave); the heap
// stays under 16 MiB plus 10 MiB per open connection (a 4 MiB outbox each way, a frame
// being reassembled and a read; a relayed chunk held for a recipient is within it); once
// every connection closed, no relayed file is left. SVC_FUZZ_TRACE=1 prints each member
// dropped for the outbox bound.
import Glibc
import MessagingCore
import Messaging
import MessagingTesting
import RoomCodeExchange
import TransportCore

let frameTypes: [UInt16] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x23, 0x24,
                            0x25, 0x26, 0x27, 0x28]

/// The key of fuzz member `seed` (hostile ones 0 to 2, well-behaved ones 100 and 101).
func fuzzSession(_ seed: UInt8) -> SecureSession {
    SecureSession(peerKey: PublicKeyFingerprint(bytes: [UInt8](repeating: seed, count: 32))!, safetyCode: "000 000 000 000",
                  localKey: PublicKeyFingerprint(bytes: [UInt8](repeating: 200, count: 32))!, roomCodeSessionID: [UInt8](repeating: seed, count: 32))
}

/// A member that follows the protocol: joins, numbers its lines (SESSION) and counts what
/// it hears from the other well-behaved member.
final class GoodMember {
    let index: Int
    let link: PeerLink
    /// The server's end of its stream: what its outbox holds there.
    let serverEnd: InMemoryStream
    let session = UInt64.random(in: 1...UInt64.max) // a hostile peer cannot guess it
    var name: String?
    var ended = false
    var linesSent = 0
    /// How often each numbered line was heard, by sender name (hostile senders included:
    /// only the well-behaved ones are judged, at the end).
    var heard: [String: [Int: Int]] = [:]

    init(index: Int, scheduler: ManualScheduler, server: RoomServer) {
        self.index = index
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler)
        theirs.secureSession = fuzzSession(100 + UInt8(index))
        serverEnd = theirs
        link = PeerLink(mine, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        link.start(onMessage: { [unowned self] message in received(message) }, onEnd: { [unowned self] _ in ended = true })
        server.accept(theirs)
        link.send(.hello(.init(name: "good\(index)")))
    }

    var isIn: Bool { name != nil && !ended }

    func say() {
        linesSent += 1
        link.send(.text(from: "", to: "", text: "good\(index) line \(linesSent)"))
    }

    private func received(_ message: Message) {
        switch message {
        case .welcome(let welcomed):
            name = welcomed
            link.send(.session(id: session, next: 1))
        case .fileOfferFrom(let offer, _, _):
            link.send(.fileAccept(id: offer.id, offset: 0)) // takes every relayed file, to let data flow
        case .text(let from, _, let text):
            guard let number = text.split(separator: " ").last.flatMap({ Int($0) }) else { return }
            heard[from, default: [:]][number, default: 0] += 1
        default: break
        }
    }
}

/// The room's bound on all outboxes together, by the input's length (so that no byte of an
/// input changes meaning): 512 KiB (under what six members may hold below the floor, 1.5 MiB),
/// 1 MiB, 3 MiB (over it: only drops keep the room under it).
let outboxLimits = [512 << 10, 1 << 20, 3 << 20]

/// Whether SVC_FUZZ_TRACE is set: each member dropped for the room's outbox bound is printed.
let tracing = getenv("SVC_FUZZ_TRACE") != nil

func fuzzRoomServer(_ bytes: UnsafeRawBufferPointer) {
    let baseline = FuzzDriver.allocatedBytes()
    let scheduler = ManualScheduler()
    var options = RoomServer.Options(name: "server")
    options.echo = false
    options.roomOutboxLimit = outboxLimits[bytes.count % outboxLimits.count]
    // Shares from the input are mostly not valid encodings; the exchange's order and its
    // refusals run all the same (a valid one makes CODE_REPLY, a wrong tag wrong-room-code).
    options.roomCode = try! RoomCode(parsing: "4829-1530-7719")
    /// Names dropped for the room's outbox bound during the current operation.
    var droppedForBound: [String] = []
    let server = RoomServer(options: options, scheduler: scheduler, fileWork: scheduler) { event in
        if case .left(_, let name, let reason) = event, reason.contains("members together had more than") { droppedForBound.append(name) }
    }
    var hostile: [RawPeer?] = [nil, nil, nil, nil]
    /// The server's ends of the hostile members' streams.
    var hostileEnds: [InMemoryStream?] = [nil, nil, nil, nil]
    /// From when the room surely counts hostile member `slot` as stalled (`RoomServer.outboxStall`):
    /// it has been paused and over the floor since an earlier operation (see the check below).
    var stalledFrom: [ContinuousClock.Instant?] = [nil, nil, nil, nil]
    var good: [GoodMember?] = [nil, nil]
    /// Lines each good member must hear: (listener, speaker name, number).
    var expected: [(listener: Int, speaker: String, number: Int)] = []
    var input = FuzzInput(bytes)

    while !input.isAtEnd {
        let started = scheduler.now
        let endedBefore = good.map { $0?.ended == true }
        droppedForBound = []
        let op = input.byte()
        let slot = Int(op >> 3)
        let peer = hostile[slot % 4]
        switch op & 7 {
        case 0:
            if peer == nil || peer?.closeReason != nil {
                let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: 1 << (Int(input.byte()) % 19))
                theirs.secureSession = slot / 4 == 0 ? nil : fuzzSession(UInt8(slot / 4 % 3))
                hostile[slot % 4] = RawPeer(mine, keepsMessages: false)
                hostileEnds[slot % 4] = theirs
                stalledFrom[slot % 4] = nil
                server.accept(theirs)
            }
        case 1:
            let typeByte = input.byte()
            let type = typeByte < 0xE0 ? frameTypes[Int(typeByte) % frameTypes.count] : UInt16(typeByte)
            let flags = UInt16(input.byte())
            let length = Int(input.integer(bytes: 3)) % (Frame.maximumPayload + 17)
            var frame: [UInt8] = []
            frame.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            frame.append(contentsOf: [UInt8(type >> 8), UInt8(type & 0xFF), 0, UInt8(flags)])
            frame.append(contentsOf: input.take(length))
            peer?.send(raw: frame)
        case 2:
            peer?.send(raw: input.take(Int(input.byte())))
        case 3:
            scheduler.advance(by: .milliseconds(500 * Int(input.byte())))
        case 4:
            if input.byte() % 2 == 0 { peer?.stream.close() } else { peer?.stream.finish() }
        case 5:
            if let peer {
                if peer.isPaused { peer.stream.resumeReading() } else { peer.stream.pauseReading() }
                peer.isPaused.toggle()
            }
        case 6:
            if let member = good[slot % 2] {
                guard member.isIn else { break }
                member.say()
                for other in good.compactMap({ $0 }) where other !== member && other.isIn {
                    expected.append((other.index, member.name ?? "", member.linesSent))
                }
            } else {
                good[slot % 2] = GoodMember(index: slot % 2, scheduler: scheduler, server: server)
            }
        default:
            let selector = input.byte()
            if selector >= 0xE0 {
                // Data for one of the ids its offers take (1 to 4), within or beyond what the
                // server granted (FILE_CREDIT), or for no transfer at all.
                let data = input.take(Int(input.integer(bytes: 3)) % (600 << 10))
                peer?.send(.fileChunk(id: UInt32(selector & 3) + 1, data: data[...]))
            } else if selector >= 0xC0 {
                let id = UInt32(selector & 3) + 1
                let size = input.integer(bytes: 3)
                peer?.send(.fileOfferTo(.init(id: id, size: size, digest: [UInt8](repeating: selector, count: 32), name: "f"),
                                        to: "good\(selector % 2)"))
            } else {
                let name = String(decoding: input.take(Int(selector) % 48), as: UTF8.self)
                peer?.send(.hello(.init(name: name)))
            }
        }
        scheduler.run()
        for peer in hostile.compactMap({ $0 }) {
            precondition(peer.faults.isEmpty, "the server sent a broken frame: \(peer.faults)")
        }
        checkOutboxBound(options: options, ends: hostileEnds.compactMap { $0 } + good.compactMap { $0?.serverEnd })
        // A member that reads is dropped for the bound only after every stalled one: any
        // hostile member the room surely counted as stalled when this operation began is gone.
        let droppedGood = good.indices.compactMap { index in
            good[index].flatMap { !endedBefore[index] && $0.ended ? $0.name : nil }
        }
        if let name = droppedForBound.first(where: droppedGood.contains) {
            for index in 0..<4 {
                guard let since = stalledFrom[index], since <= started, let end = hostileEnds[index] else { continue }
                precondition(!end.isOpen, "\(name), which reads everything, was dropped for the room's outboxes while hostile member \(index) stayed, stalled over the floor (holding \(end.heldByteCount) bytes)")
            }
        }
        for index in 0..<4 {
            // Paused, its outbox only grows and never moves: once a check saw it over the floor
            // (every turn that puts it over calls one), the room counts it as stalled a second later.
            if let peer = hostile[index], peer.isPaused, let end = hostileEnds[index], end.isOpen, end.heldByteCount > RoomServer.outboxFloor {
                if stalledFrom[index] == nil { stalledFrom[index] = scheduler.now + RoomServer.outboxStall }
            } else {
                stalledFrom[index] = nil
            }
        }
        if tracing, !droppedForBound.isEmpty { print("dropped for the room's outboxes (limit \(options.roomOutboxLimit)): \(droppedForBound)") }
        let open = hostile.count { $0 != nil && $0?.closeReason == nil } + good.count { $0 != nil && $0?.ended == false }
        if let baseline, let now = FuzzDriver.allocatedBytes() {
            let held = now - baseline
            precondition(held <= (16 << 20) + open * (10 << 20), "the heap grew by \(held) bytes with \(open) connections open")
        }
    }

    // No line of a well-behaved member was heard twice; every one sent while both were in the
    // room arrived.
    let goodNames = Set(good.compactMap { $0?.name })
    for member in good.compactMap({ $0 }) {
        for (speaker, counts) in member.heard where goodNames.contains(speaker) {
            precondition(counts.values.allSatisfy { $0 == 1 }, "\(member.name ?? "?") heard lines of \(speaker) more than once: \(counts)")
        }
    }
    for (listener, speaker, number) in expected {
        guard let member = good[listener], !member.ended, let other = good[1 - listener], !other.ended else { continue }
        precondition(member.heard[speaker]?[number] != nil, "\(member.name ?? "?") never heard line \(number) of \(speaker)")
    }

    // Hostile members never answer PING: within two minutes every one of them is gone, even
    // one that closed its side and reads nothing, while the well-behaved ones stay.
    for _ in 0..<8 { scheduler.advance(by: .seconds(15)) }
    let staying = Set(good.compactMap { $0?.isIn == true ? $0?.name : nil })
    precondition(Set(server.names.dropFirst()) == staying, "after two silent minutes the room still lists \(server.names); only \(staying) answer")

    // Tear down: everyone leaves, the grace timers run out, nothing is left behind.
    for peer in hostile.compactMap({ $0 }) { peer.stream.close() }
    for member in good.compactMap({ $0 }) { member.link.connection.close() }
    scheduler.run()
    scheduler.advance(by: .seconds(60))
    precondition(server.names == ["server"], "members are still listed after every connection closed: \(server.names)")
    precondition(server.relayedTransferCount == 0, "\(server.relayedTransferCount) relayed files are left after every connection closed")
}

/// The room's bound on all outboxes together (`RoomServer.boundOutboxes`), as it holds whenever
/// the loop is idle: every send queued for a member calls a check at the end of its turn once
/// that member holds more than `RoomServer.outboxFloor` or the last check kept someone over it,
/// and the check drops members over the floor until the rest is under the limit. So either
/// the open connections' outboxes (`heldByteCount`, what the check adds up) hold at most the
/// limit together, or none holds more than the floor (they are never dropped for it).
func checkOutboxBound(options: RoomServer.Options, ends: [InMemoryStream]) {
    let held = ends.filter(\.isOpen).map(\.heldByteCount)
    let total = held.reduce(0, +)
    precondition(total <= options.roomOutboxLimit || held.allSatisfy { $0 <= RoomServer.outboxFloor },
                 "the outboxes hold \(total) bytes together (\(held)), over the room's \(options.roomOutboxLimit), while one holds more than the floor")
}

@main
enum RoomServerFuzz {
    static func main() { FuzzDriver.main(fuzzRoomServer) }
}
