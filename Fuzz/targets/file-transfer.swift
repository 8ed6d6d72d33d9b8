// Fuzz target `file-transfer`: both ends of a file transfer (FileTransfers over PeerLinks,
// inboxes in a temporary directory, disk work on the same manual scheduler), on an in-memory
// stream, with hostile frames written into the stream between the real ones. The input:
//   setup: read size 1 << (6 + b % 13); file size (a scale byte below 0xF0 and 2 bytes, else 3
//   bytes up to 2.5 MiB: 0, one chunk, a chunk and a byte are all reachable); 64 bytes
//   repeated as its content; resume byte r: r & 1
//   leaves a partial file of k bytes (3 bytes; may pass the size) in the receiving inbox,
//   r & 2 corrupts it (a checksum mismatch must follow), r & 4 has both ends say HELLO with
//   every capability first, so the file goes streamed (offered by resume tag, its SHA-256
//   with FILE_END; the partial file is then kept under the tag).
//   then operations, one byte `kind | argument << 3`:
//   0 run at most b work items (the transfer advances part way)
//   1 / 2 a frame to the receiver / to the sender, as a third party would write it: type
//     (b < 0xE0: one of the 19 types; else b), flags byte, 3-byte length up to 1 MiB, payload
//   3 the clock moves on by b × 0.5 s
//   4 the receiver stops or resumes reading
//   5 one end closes (argument even: sender) or finishes
//   6 the sender offers the file again; 7 the receiver offers it back
// Checked: nothing traps; every frame either end writes fits 1 MiB and decodes; with no
// interference the file arrives identical (or, from a corrupted partial file, is reported as
// a checksum mismatch and nothing is stored); the heap stays under 32 MiB (4 MiB outboxes,
// 8 MiB of disk backlog, a chunk being read and one being reassembled).
import Glibc
import Messaging
import MessagingCore
import MessagingTesting
import TransportCore

let frameTypes: [UInt16] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x23, 0x24,
                            0x25, 0x26, 0x27, 0x28]

/// One end: a link, its transfers, and a check of every frame it writes.
final class End {
    let stream: InMemoryStream
    let link: PeerLink
    let inbox: Inbox
    var files: FileTransfers?
    var checker = FrameChecker()
    var results: [Result<FileTransfers.SentFile, FileError>] = []

    init(_ stream: InMemoryStream, scheduler: ManualScheduler, inbox: Inbox) {
        self.stream = stream
        self.inbox = inbox
        link = PeerLink(stream, scheduler: scheduler, handshakeTimeout: nil, heartbeatInterval: .seconds(15))
        let files = FileTransfers(link: link, inbox: inbox, disk: scheduler, hashing: scheduler) { _ in }
        self.files = files
        stream.tap = { [unowned self] bytes in _ = checker.feed(bytes) }
        link.start(onMessage: { message in _ = files.handle(message) }, onEnd: { [unowned self] reason in
            files.linkEnded(reason)
            self.files = nil
        })
    }

    /// Says HELLO with every capability (`.streamedFiles` among them).
    func hello(_ name: String) {
        link.send(.hello(.init(name: name)))
    }

    func send(_ path: String) {
        files?.send(path: path) { [unowned self] result in results.append(result) }
    }
}

func frame(_ input: inout FuzzInput) -> [UInt8] {
    let typeByte = input.byte()
    let type = typeByte < 0xE0 ? frameTypes[Int(typeByte) % frameTypes.count] : UInt16(typeByte)
    let flags = input.byte()
    let length = Int(input.integer(bytes: 3)) % (Frame.maximumPayload + 1)
    return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            UInt8(type >> 8), UInt8(type & 0xFF), 0, flags] + input.take(length)
}

func fuzzFileTransfer(_ bytes: UnsafeRawBufferPointer) {
    let baseline = FuzzDriver.allocatedBytes()
    var input = FuzzInput(bytes)
    let scheduler = ManualScheduler()
    guard let directory = try? TemporaryDirectory(prefix: "svc-fuzz-file-transfer"),
          let inboxA = try? Inbox(directory: directory.path + "/a"), let inboxB = try? Inbox(directory: directory.path + "/b") else {
        preconditionFailure("cannot make the inboxes in a temporary directory; set TMPDIR to a writable directory")
    }
    // Reads of 64 bytes to 256 KiB (byte-at-a-time reassembly is the frame decoder's own
    // test; here it would spend seconds on one large file).
    let (streamA, streamB) = InMemoryStream.pair(scheduler: scheduler, deliveryChunk: 1 << (6 + Int(input.byte()) % 13))
    let sender = End(streamA, scheduler: scheduler, inbox: inboxA)
    let receiver = End(streamB, scheduler: scheduler, inbox: inboxB)

    // Mostly small files (fast runs); a scale byte of 0xF0 or more allows up to 2.5 MiB.
    let size = input.byte() < 0xF0 ? Int(input.integer(bytes: 2)) : Int(input.integer(bytes: 3)) % (5 << 19)
    let pattern = input.take(64)
    let content = (0..<size).map { pattern[$0 % 64] &+ UInt8(truncatingIfNeeded: $0 >> 6) }
    let source = directory.write(content, to: "source.bin")
    let resume = input.byte()
    let streamed = resume & 4 == 4
    if streamed {
        sender.hello("sender")
        receiver.hello("receiver")
        scheduler.run()
    }
    let partialCount = Int(input.integer(bytes: 3)) % (size + 2)
    var corrupted = false
    if resume & 1 == 1 {
        let hash = SHA256()
        hash.update(content)
        var partial = Array(content.prefix(partialCount))
        if partialCount > size { partial.append(0x55) } // longer than the file: it starts over
        if resume & 2 == 2, !partial.isEmpty, partialCount <= size {
            partial[partial.count / 2] ^= 0xFF
            corrupted = true
        }
        // Where the receiver keeps this sender's data of the file (an in-memory peer has no address).
        let named = streamed ? FileTransfers.resumeTag(ofFileAt: source) : hash.finish()
        guard let named else { preconditionFailure("cannot examine \(source)") }
        let key = PartialKey(digest: named, size: UInt64(size), sender: "an unknown address")
        directory.write(partial, to: "b/.partial/" + key.name)
    }
    sender.send(source)

    var interfered = false
    while !input.isAtEnd {
        let op = input.byte()
        let argument = Int(op >> 3)
        switch op & 7 {
        case 0: scheduler.run(atMost: Int(input.byte()))
        case 1: interfered = true; streamA.inject(frame(&input))
        case 2: interfered = true; streamB.inject(frame(&input))
        case 3: scheduler.advance(by: .milliseconds(500 * Int(input.byte())))
        case 4:
            interfered = true
            if argument % 2 == 0 { streamB.pauseReading() } else { streamB.resumeReading() }
        case 5:
            interfered = true
            let stream = argument % 2 == 0 ? streamA : streamB
            if argument % 4 < 2 { stream.close() } else { stream.finish() }
        case 6: sender.send(source)
        default: interfered = true; receiver.send(source)
        }
        precondition(sender.checker.faults.isEmpty && receiver.checker.faults.isEmpty,
                     "a broken frame was written: \(sender.checker.faults + receiver.checker.faults)")
        if let baseline, let now = FuzzDriver.allocatedBytes() {
            precondition(now - baseline <= 32 << 20, "the heap grew by \(now - baseline) bytes")
        }
    }
    if interfered { streamB.resumeReading() }
    scheduler.run()
    precondition(sender.checker.faults.isEmpty && receiver.checker.faults.isEmpty,
                 "a broken frame was written: \(sender.checker.faults + receiver.checker.faults)")

    if !interfered {
        // Undisturbed, the first offer must end the way the data says it should.
        guard let first = sender.results.first else { preconditionFailure("the transfer of \(size) bytes never finished") }
        switch first {
        case .success(let sent):
            precondition(!corrupted, "a file resumed from corrupted partial data was stored")
            let stored = TemporaryDirectory.read(inboxB.directory + "/" + sent.storedAs)
            precondition(stored == content, "the stored file differs from the one sent (\(stored?.count ?? -1) of \(size) bytes)")
        case .failure(let error):
            precondition(corrupted, "the transfer failed without interference: \(error)")
        }
    }

    streamA.close()
    streamB.close()
    scheduler.run()
    scheduler.advance(by: .seconds(60))
}

@main
enum FileTransferFuzz {
    static func main() { FuzzDriver.main(fuzzFileTransfer) }
}
