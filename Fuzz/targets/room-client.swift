// Fuzz target `room-client`: a RoomClient (inbox in a temporary directory) joined to a hostile
// server over an in-memory stream, with a manual clock driven on the client's queue. After
// the client's HELLO, the input is a sequence of operations, one byte `kind | argument << 3`:
//   0 the server sends a frame: type (b < 0xE0: one of the 19 types; else b), flags byte,
//     3-byte length (up to 1 MiB + 16: oversize too), payload (zeros past the input's end)
//   1 the server sends n raw bytes
//   2 the server sends HELLO with capabilities b (ACK on or off)
//   3 the server sends WELCOME with a name of b % 48 bytes
//   4 the clock moves on by b × 0.5 s (join timeout 5 s, heartbeats 15 s)
//   5 the user types a numbered line (argument odd: a private one), /who, or /send of a file
//     (argument % 8 == 7: to the member bob, relayed by the room: it waits for FILE_CREDIT)
//   6 the server acknowledges through an 8-byte number (0 and UInt64.max included)
//   7 the server stops or resumes reading, finishes, or closes; or the user stops the client
// Checked: nothing traps; every frame the client writes fits 1 MiB and decodes; a line sent
// again (a hostile server may WELCOME twice) goes under the same SESSION number, so that an
// honest server would relay it once (unchecked once the server sent a second HELLO, which
// may withdraw acknowledgements: see the commit); connect() returns once the
// stream is gone; the heap stays under 32 MiB (the queue of 1,000 lines, a 4 MiB outbox
// each way, a file chunk and a frame being reassembled).
import Dispatch
import DiscoveryCore
import Glibc
import Messaging
import MessagingCore
import MessagingTesting
import Synchronization
import TransportCore

let frameTypes: [UInt16] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x23, 0x24,
                            0x25, 0x26, 0x27, 0x28]
let queue = DispatchQueue(label: "fuzz.room.client")

/// What the connector hands over, shared between the client's task and the fuzzer.
final class Opened: Sendable {
    let stream = Mutex<InMemoryStream?>(nil)
}

/// Checks the frames the client writes (used on the client's queue only).
final class Written: @unchecked Sendable {
    var checker = FrameChecker()
    /// The SESSION in force and the number its next TEXT carries.
    var session: (id: UInt64, next: UInt64)?
    /// The number each line went out under.
    var numbers: [String: [UInt64]] = [:]
    /// HELLOs the client took: after a second one the server may have changed its mind about
    /// acknowledging, and the client's numbering toward it is no longer checked.
    var hellos = 0

    func saw(_ message: Message) {
        switch message {
        case .session(let id, let next): session = (id, next)
        case .text(_, _, let text):
            guard let current = session else { return } // unnumbered: the server cannot tell repeats apart anyway
            let number = [current.id, current.next]
            session = (current.id, current.next &+ 1)
            if let earlier = numbers[text], hellos <= 1 {
                precondition(earlier == number, "the client sent '\(text)' as \(earlier) and again as \(number): a server would relay it twice")
            }
            numbers[text] = number
        default: break
        }
    }
}

func fuzzRoomClient(_ bytes: UnsafeRawBufferPointer) {
    let baseline = FuzzDriver.allocatedBytes()
    var input = FuzzInput(bytes)
    let scheduler = ManualScheduler()
    guard let directory = try? TemporaryDirectory(prefix: "svc-fuzz-room-client"),
          let inbox = try? Inbox(directory: directory.path + "/inbox") else {
        preconditionFailure("cannot make an inbox in a temporary directory; set TMPDIR to a writable directory")
    }
    let file = directory.write((0..<3000).map { UInt8(truncatingIfNeeded: $0) }, to: "file.bin")
    var options = RoomClient.Options(instance: ServiceInstance(name: "room", type: .p2pipp, domain: .local), name: "fuzzer")
    options.reconnect = false
    options.inbox = inbox
    let opened = Opened()
    let written = Written()
    guard let address = IPAddress(bytes: [10, 0, 0, 1]) else { preconditionFailure("10.0.0.1 is an IPv4 address") }
    let endpoint = SocketEndpoint(address: address, port: 4242)
    let client = RoomClient(options: options, executor: queue, scheduler: scheduler, connector: { _, _ in
        let (mine, theirs) = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: 4096)
        mine.tap = { bytes in written.checker.feed(bytes).forEach(written.saw) }
        opened.stream.withLock { $0 = theirs }
        return RoomClient.Connected(stream: mine, endpoint: endpoint, candidates: [endpoint])
    }, fileWork: scheduler, hook: { event in
        if case .serverHello = event { written.hellos += 1 }
    })

    let connected = DispatchSemaphore(value: 0)
    Task {
        try? await client.connect()
        connected.signal()
    }
    var end: InMemoryStream?
    var waited = 0
    while end == nil && waited < 100_000 {
        end = opened.stream.withLock { $0 }
        if end == nil { usleep(50); waited += 1 }
    }
    guard let end else { preconditionFailure("the client never opened its stream (waited 5 s)") }
    let server = queue.sync { RawPeer(end, keepsMessages: false) }
    waited = 0
    while queue.sync(execute: { scheduler.run(); return server.frameCount == 0 }) {
        waited += 1
        precondition(waited < 100_000, "the client sent no HELLO within 5 s")
        usleep(50)
    }

    var lines = 0
    while !input.isAtEnd {
        let op = input.byte()
        let argument = Int(op >> 3)
        switch op & 7 {
        case 0:
            let typeByte = input.byte()
            let type = typeByte < 0xE0 ? frameTypes[Int(typeByte) % frameTypes.count] : UInt16(typeByte)
            let flags = input.byte()
            let length = Int(input.integer(bytes: 3)) % (Frame.maximumPayload + 17)
            let frame = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
                         UInt8(type >> 8), UInt8(type & 0xFF), 0, flags] + input.take(length)
            queue.sync { _ = server.send(raw: frame) }
        case 1:
            let raw = input.take(Int(input.byte()))
            queue.sync { _ = server.send(raw: raw) }
        case 2:
            let capabilities = Message.Capabilities(rawValue: UInt32(input.byte()))
            queue.sync { _ = server.send(.hello(.init(capabilities: capabilities, name: "room"))) }
        case 3:
            let name = String(decoding: input.take(Int(input.byte()) % 48), as: UTF8.self)
            queue.sync { _ = server.send(.welcome(name: name)) }
        case 4:
            let seconds = input.byte()
            queue.sync { scheduler.advance(by: .milliseconds(500 * Int(seconds))) }
        case 5:
            lines += 1
            switch argument % 4 {
            case 0: client.submit(.say("line \(lines)"))
            case 1: client.submit(.message(to: "someone", text: "line \(lines)"))
            case 2: client.submit(.who)
            default: client.submit(.send(to: argument % 8 == 7 ? "bob" : nil, path: file))
            }
        case 6:
            let through = input.integer(bytes: 8)
            queue.sync { _ = server.send(.acknowledged(through: through)) }
        default:
            queue.sync {
                switch argument % 5 {
                case 0: server.stream.pauseReading()
                case 1: server.stream.resumeReading()
                case 2: server.stream.finish()
                case 3: server.stream.close()
                default: client.stop()
                }
            }
        }
        queue.sync { _ = scheduler.run() }
        queue.sync { precondition(written.checker.faults.isEmpty, "the client wrote a broken frame: \(written.checker.faults)") }
        if let baseline, let now = FuzzDriver.allocatedBytes() {
            precondition(now - baseline <= 32 << 20, "the heap grew by \(now - baseline) bytes")
        }
    }

    // The server goes away: connect() must return (joined or not), and the client end.
    queue.sync {
        server.stream.close()
        scheduler.run()
        scheduler.advance(by: .seconds(60))
    }
    var returned = false
    waited = 0
    while !returned && waited < 1000 {
        returned = connected.wait(timeout: .now() + .milliseconds(5)) == .success
        queue.sync { _ = scheduler.run() }
        waited += 1
    }
    precondition(returned, "connect() did not return within 5 s after the server went away")
    client.stop()
    queue.sync { _ = scheduler.run() }
}

@main
enum RoomClientFuzz {
    static func main() { FuzzDriver.main(fuzzRoomClient) }
}
