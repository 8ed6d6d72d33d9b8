import CommandLineSupport
import Dispatch
import Messaging
import MessagingCore
import TransportPOSIX

/// Request/response round trips through a room served with `svc-publish --echo`.
enum PingPong {
    /// Through TLS with `security`.
    static func run(_ options: BenchOptions, security: ClientSecurity?) async throws -> ExitCode {
        let loop = try EventLoop(name: "bench-ping")
        defer { loop.shutdown() }
        let state = PingState(payload: String(repeating: "p", count: options.size - 4), count: options.count)
        let warmup = min(1000, options.count / 10)
        let link = try await join(options.target!, as: options.prefix, loop: loop, heartbeat: .seconds(3600), timeout: options.timeout,
                                  security: security, onMessage: { message in state.received(message) },
                                  onEnd: { reason in state.failure = state.failure ?? "the connection ended: \(reason)" })
        state.link = link
        try await waitUntil("the room's WELCOME", timeout: options.timeout) { loop.runAndWait { state.welcomed || state.failure != nil } }
        if let failure = loop.runAndWait( { state.failure }) { throw ToolFailure(.failure, failure) }
        loop.runAndWait { state.sendNext() }
        try await waitUntil("\(options.count + warmup) echoes", timeout: options.timeout) {
            loop.runAndWait { state.roundTrips.count >= options.count + warmup || state.failure != nil }
        }
        if let failure = loop.runAndWait( { state.failure }) { throw ToolFailure(.failure, failure) }
        let sorted = loop.runAndWait { state.roundTrips.dropFirst(warmup).sorted() }
        let micro = { (value: UInt64) in JSONValue.integer(Int(value / 1000)) }
        report("ping", [("round_trips", .integer(sorted.count)), ("payload_bytes", .integer(options.size)),
                        ("p50_us", micro(percentile(sorted, 0.5))), ("p99_us", micro(percentile(sorted, 0.99))),
                        ("min_us", micro(sorted.first ?? 0)), ("max_us", micro(sorted.last ?? 0))])
        loop.runAndWait { link.goodbye("done") }
        return .success
    }
}

/// The round-trip loop. - Important: used only on the link's loop.
private final class PingState: @unchecked Sendable {
    let payload: String
    let count: Int
    var link: PeerLink?
    var welcomed = false
    var sentAt: UInt64 = 0
    var roundTrips: [UInt64] = []
    var failure: String?

    init(payload: String, count: Int) {
        self.payload = payload
        self.count = count
        roundTrips.reserveCapacity(count + 1000)
    }

    func received(_ message: Message) {
        switch message {
        case .welcome: welcomed = true
        case .text(_, _, let text) where text == payload:
            roundTrips.append(monotonicNanoseconds() - sentAt)
            sendNext()
        case .error(let code, let text): failure = "the server answered ERROR \(code): \(text)"
        default: break
        }
    }

    func sendNext() {
        sentAt = monotonicNanoseconds()
        link?.send(.text(from: "", to: "", text: payload))
    }
}
