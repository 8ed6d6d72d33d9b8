import CommandLineSupport
import Dispatch
import Messaging
import MessagingCore
import TransportPOSIX

/// Many members in one room: delivery (exactly once, in each sender's order), throughput,
/// latency, then an idle period with heartbeats after which every member must still be served.
enum RoomLoad {
    /// Members connect through TLS with `security`.
    static func run(_ options: BenchOptions, security: ClientSecurity?) async throws -> ExitCode {
        let fileLimit = ResourceLimits.raiseOpenFileLimit()
        guard fileLimit >= UInt64(options.clients) + 32 else {
            throw ToolFailure(.usage, "only \(fileLimit) open files are allowed, too few for \(options.clients) clients; raise 'ulimit -n'")
        }
        let group = try EventLoopGroup(loopCount: 2, name: "bench-room")
        defer { group.shutdown() }
        let loops = group.loops
        let members = (0..<options.clients).map { Member(index: $0, clients: options.clients, loop: loops[$0 % loops.count]) }
        let joinStart = monotonicNanoseconds()
        if options.atOnce {
            let deadline = ContinuousClock.now + options.timeout
            try await withThrowingTaskGroup(of: Void.self) { group in
                for member in members {
                    group.addTask { try await connectRetrying(member, options, security: security, until: deadline) }
                }
                try await group.waitForAll()
            }
        } else {
            for member in members { try await connect(member, options, security: security) }
        }
        try await waitUntil("every member's WELCOME", timeout: options.timeout) { members.allSatisfy { m in m.loop.runAndWait { m.welcomed || m.ended != nil } } }
        if !options.atOnce {
            // Connected one after the other without waiting for WELCOME, many wait for their
            // handshake at once; a room past its bounds for those turns some away (server-full,
            // or the oldest closed): they join again, as a member would (row 9 of Scripts/bench
            // failed now and then with 29 or 62 of 1,000 members not welcomed).
            let deadline = ContinuousClock.now + options.timeout
            for member in members where member.loop.runAndWait({ !member.welcomed && member.ended != nil }) {
                member.loop.runAndWait {
                    member.retryReasons.append(member.ended.map(Self.reasonClass) ?? "?")
                    member.ended = nil
                }
                try await connectRetrying(member, options, security: security, until: deadline)
            }
        }
        let refused = members.filter { m in m.loop.runAndWait { !m.welcomed } }.count
        let retried = members.reduce(0) { sum, m in sum + m.loop.runAndWait { m.retryReasons.count } }
        let reasons = Dictionary(members.flatMap { m in m.loop.runAndWait { m.retryReasons } }.map { ($0, 1) }, uniquingKeysWith: +)
        report("joined", [("clients", .integer(options.clients)), ("refused", .integer(refused)), ("retried", .integer(retried)),
                          ("retried_because", .object(reasons.sorted { $0.value > $1.value }.map { ($0.key, .integer($0.value)) })),
                          ("milliseconds", .integer(Int((monotonicNanoseconds() - joinStart) / 1_000_000)))])
        guard refused == 0 else {
            let why = Set(members.compactMap { m in m.loop.runAndWait { m.welcomed ? nil : m.ended?.description } }).sorted()
            throw ToolFailure(.failure, "\(refused) of \(options.clients) members were not welcomed: \(why.joined(separator: "; "))")
        }

        var failed = false
        if options.messages > 0 {
            failed = try await exchange(members, options) || failed
        }
        if options.idle > .zero {
            report("idle", [("seconds", .string(options.idle.secondsText))])
            try await Task.sleep(for: options.idle)
            failed = try await checkServed(members, options) || failed
        }
        for member in members { member.loop.runAndWait { member.link?.goodbye("done") } }
        return failed ? .failure : .success
    }

    private static func connect(_ member: Member, _ options: BenchOptions, security: ClientSecurity?) async throws {
        let link = try await join(options.target!, as: "\(options.prefix)\(member.index)", loop: member.loop, heartbeat: options.heartbeat,
                                  timeout: options.timeout, security: security, onMessage: { member.received($0) }, onEnd: { member.ended = $0 })
        member.loop.runAndWait { member.link = link }
    }

    /// Connects `member` and waits for its WELCOME. A connection that ends before it (a busy
    /// room answers `server-full` when too many connections from one host wait for their
    /// handshake, and closes the oldest waiting ones when too many wait in all) is made again
    /// after a growing pause, 20 ms to 1 s with jitter, as svc-connect would, until `deadline`;
    /// not after the server's key was refused.
    private static func connectRetrying(_ member: Member, _ options: BenchOptions, security: ClientSecurity?,
                                        until deadline: ContinuousClock.Instant) async throws {
        var pause = Duration.milliseconds(20)
        while true {
            let outcome = AsyncStream<Bool>.makeStream()
            let link = try await join(options.target!, as: "\(options.prefix)\(member.index)", loop: member.loop, heartbeat: options.heartbeat,
                                      timeout: options.timeout, security: security, onMessage: { message in
                                          if case .welcome = message { outcome.continuation.yield(true) }
                                          member.received(message)
                                      }, onEnd: { reason in
                                          member.ended = reason
                                          outcome.continuation.yield(false)
                                      })
            member.loop.runAndWait { member.link = link }
            var welcomed = false
            for await value in outcome.stream { welcomed = value; break }
            let keyRefused = member.loop.runAndWait { link.connection.rejectedPeerKey != nil }
            guard !welcomed, !keyRefused, ContinuousClock.now + pause < deadline else { return }
            member.loop.runAndWait {
                member.retryReasons.append(member.ended.map(Self.reasonClass) ?? "?")
                member.ended = nil
            }
            try await Task.sleep(for: pause * Double.random(in: 0.5...1.5))
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// Why a connection ended, without what varies from one connection to the next (numbers).
    private static func reasonClass(_ reason: PeerLink.EndReason) -> String {
        if case .peerError(let code, _) = reason { return ProtocolError.Code(rawValue: code)?.name ?? "error \(code)" }
        let kept = reason.description.prefix { $0 != "(" && !$0.isNumber }.prefix(80)
        return String(kept.reversed().drop { $0 == " " || $0 == ":" }.reversed())
    }

    /// Every member sends `messages` texts; returns whether a check failed.
    private static func exchange(_ members: [Member], _ options: BenchOptions) async throws -> Bool {
        let expected = options.clients * (options.clients - 1) * options.messages
        let start = monotonicNanoseconds()
        for sequence in 0..<options.messages {
            for member in members {
                member.loop.execute { member.sendText(sequence: sequence) }
            }
        }
        let total = { members.reduce(0) { sum, m in sum + m.loop.runAndWait { m.receivedCount } } }
        try? await waitUntil("\(expected) deliveries", timeout: options.timeout) { total() >= expected || members.contains { m in m.loop.runAndWait { m.ended != nil } } }
        let last = members.map { m in m.loop.runAndWait { m.lastArrival } }.max() ?? start
        let delivered = total()
        let disorder = members.reduce(0) { sum, m in sum + m.loop.runAndWait { m.outOfOrder } }
        let missing = members.reduce(0) { sum, m in sum + m.loop.runAndWait { m.missing(messagesEach: options.messages) } }
        let latencies = members.flatMap { m in m.loop.runAndWait { m.latencies } }.sorted()
        let seconds = Double(last - start) / 1e9
        let micro = { (value: UInt64) in JSONValue.integer(Int(value / 1000)) }
        report("delivered", [
            ("expected", .integer(expected)), ("delivered", .integer(delivered)), ("missing", .integer(missing)),
            ("duplicated_or_reordered", .integer(disorder)), ("milliseconds", .integer(Int(seconds * 1000))),
            ("deliveries_per_second", .integer(seconds > 0 ? Int(Double(delivered) / seconds) : 0)),
            ("sent_per_second", .integer(seconds > 0 ? Int(Double(options.clients * options.messages) / seconds) : 0)),
            ("latency_p50_us", micro(percentile(latencies, 0.5))), ("latency_p99_us", micro(percentile(latencies, 0.99))),
            ("latency_max_us", micro(latencies.last ?? 0)),
        ])
        return delivered != expected || missing != 0 || disorder != 0
    }

    /// After the idle period: every member is still connected and gets an answer to WHO.
    private static func checkServed(_ members: [Member], _ options: BenchOptions) async throws -> Bool {
        let dropped = members.filter { m in m.loop.runAndWait { m.ended != nil } }.count
        for member in members { member.loop.execute { member.listsReceived = 0; member.link?.send(.who) } }
        try? await waitUntil("answers to WHO", timeout: options.timeout) { members.allSatisfy { m in m.loop.runAndWait { m.listsReceived > 0 || m.ended != nil } } }
        let served = members.filter { m in m.loop.runAndWait { m.listsReceived > 0 } }.count
        report("served-after-idle", [("clients", .integer(options.clients)), ("served", .integer(served)), ("dropped", .integer(dropped))])
        return served != options.clients
    }
}

/// One member's link and what it received. - Important: used only on `loop`.
private final class Member: @unchecked Sendable {
    let index: Int
    let loop: EventLoop
    var link: PeerLink?
    var welcomed = false
    var ended: PeerLink.EndReason?
    var receivedCount = 0
    var outOfOrder = 0
    var listsReceived = 0
    /// Why each of this member's connections before the last ended (`--at-once`).
    var retryReasons: [String] = []
    var lastArrival: UInt64 = 0
    var latencies: [UInt64] = []
    /// The next sequence number expected from each sender.
    private var nextSequence: [Int]

    init(index: Int, clients: Int, loop: EventLoop) {
        self.index = index
        self.loop = loop
        nextSequence = Array(repeating: 0, count: clients)
    }

    /// Text: "<sender> <sequence> <send time in ns>".
    func sendText(sequence: Int) {
        link?.send(.text(from: "", to: "", text: "\(index) \(sequence) \(monotonicNanoseconds())"))
    }

    func received(_ message: Message) {
        switch message {
        case .welcome: welcomed = true
        case .presence(.list, _), .presenceWithKeys(.list, _): listsReceived += 1 // with member keys since capability 64
        case .text(_, _, let text):
            let now = monotonicNanoseconds()
            let fields = text.split(separator: " ")
            guard fields.count == 3, let sender = Int(fields[0]), let sequence = Int(fields[1]), let sent = UInt64(fields[2]),
                  nextSequence.indices.contains(sender) else { return }
            receivedCount += 1
            lastArrival = now
            latencies.append(now - sent)
            if sequence == nextSequence[sender] { nextSequence[sender] += 1 } else { outOfOrder += 1 }
        default: break
        }
    }

    /// Texts never received from the other members.
    func missing(messagesEach: Int) -> Int {
        nextSequence.indices.reduce(0) { sum, sender in sender == index ? sum : sum + max(0, messagesEach - nextSequence[sender]) }
    }
}
