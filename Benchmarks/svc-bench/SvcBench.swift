import CommandLineSupport
import Dispatch
import Messaging
import MessagingCore
import TransportCore
import TransportPOSIX

@main
struct SvcBench {
    static func main() async {
        await ToolMain.run(BenchOptions.spec, validate: BenchOptions.init) { options in
            let security = options.tls ? try ClientSecurity(expectedServerKey: options.fingerprint, identityPath: options.identity) : nil
            switch options.mode {
            case .flood: return try await Flood.send(options, security: security)
            case .sink: return try await Flood.receive(options, security: security)
            case .ping: return try await PingPong.run(options, security: security)
            case .room: return try await RoomLoad.run(options, security: security)
            case .register: return try await ManyRegistrations.run(options)
            }
        }
    }
}

/// One JSON object a phase on stdout, for the scripts that drive svc-bench.
func report(_ phase: String, _ fields: [(String, JSONValue)]) {
    Console.out(JSONValue.object([("phase", .string(phase))] + fields).serialized)
}

/// Nanoseconds on the monotonic clock (comparable within this process only).
func monotonicNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The value below which `fraction` of the sorted samples fall.
func percentile(_ sorted: [UInt64], _ fraction: Double) -> UInt64 {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// Connects to `endpoint` and starts a link on `loop`, saying HELLO as `name`; through TLS
/// when `security` is given (the HELLO then waits for the handshake).
/// - Returns: the link; its messages go to `onMessage`, its end to `onEnd`, both on `loop`.
func join(_ endpoint: SocketEndpoint, as name: String, loop: EventLoop, heartbeat: Duration, timeout: Duration,
          security: ClientSecurity?, onMessage: @escaping (Message) -> Void,
          onEnd: @escaping (PeerLink.EndReason) -> Void = { _ in }) async throws -> PeerLink {
    let (socket, peer) = try await TCPConnector.connect(to: [endpoint], timeout: timeout, on: loop)
    let connection = Connection(socket: socket, peer: peer, loop: loop)
    let stream: any ByteStream = try security?.wrap(connection, loop: loop) ?? connection
    let link = PeerLink(stream, scheduler: loop, handshakeTimeout: nil, heartbeatInterval: heartbeat)
    loop.runAndWait {
        link.start(onMessage: onMessage, onEnd: onEnd)
        link.send(.hello(.init(name: name)))
    }
    return link
}

/// Polls `condition` until it holds, or throws a timeout naming `what`.
func waitUntil(_ what: String, timeout: Duration, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw ToolFailure(.temporaryFailure, "timed out after \(timeout.secondsText) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
