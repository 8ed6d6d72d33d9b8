import CommandLineSupport
import TransportCore

/// svc-bench's validated command line: one mode and the options it uses.
struct BenchOptions: Sendable {
    enum Mode: String, Sendable, CaseIterable {
        case flood, sink, ping, room, register
    }

    var mode: Mode
    var target: SocketEndpoint?
    var port: UInt16 = 0
    var count = 100_000
    var size = 64
    /// `--batch`: messages `flood` hands to the link in one call.
    var batch = 64
    var clients = 200
    var messages = 100
    var idle: Duration = .zero
    var heartbeat: Duration = .seconds(15)
    var timeout: Duration = .seconds(60)
    var prefix = "bench"
    /// `--tls`: connect through TLS 1.3 (flood, ping, room), or accept through it (sink).
    var tls = false
    /// `--fingerprint`: the only server key `--tls` accepts; nil accepts any.
    var fingerprint: String?
    /// `--identity`: the key file `--tls` presents (created if missing); nil: a key in memory.
    var identity: String?
    /// `--at-once`: room members connect all together rather than one after another.
    var atOnce = false

    static let spec = CommandSpec(
        name: "svc-bench",
        version: svcVersion,
        overview: "Load generator for Scripts/bench and Scripts/stress: drives the messaging library and prints JSON figures.",
        arguments: [.init("mode", help: "flood, sink, ping, room or register (see below).")],
        options: [
            .init("to", value: "ipv4:port", help: "The server to connect to (flood, ping, room)."),
            .init("port", value: "port", help: "The port to listen on (sink; default: any free port, printed)."),
            .init("count", value: "n", help: "Messages (flood, sink), round trips (ping) or services (register)."),
            .init("batch", value: "n", help: "Messages flood hands to the link in one call (default: 64; 1 sends each alone, as a room relays)."),
            .init("size", value: "bytes", help: "Payload bytes of each TEXT frame (flood, ping; default: 64)."),
            .init("clients", value: "n", help: "Members to connect (room; default: 200)."),
            .init("messages", value: "n", help: "Messages each member sends to the room (room; default: 100)."),
            .init("idle", value: "seconds", help: "Stay connected and idle this long before leaving (room)."),
            .init("heartbeat", value: "seconds", help: "Members ping after this much silence (room; default: 15)."),
            .init("timeout", value: "seconds", help: "Give up on a phase after this long (default: 60)."),
            .init("prefix", value: "name", help: "Instance name prefix (register) or member name prefix (room)."),
            .init("tls", help: "Connect through TLS 1.3 with a key made in memory (flood, ping, room; without --fingerprint any server key is accepted), or accept through it (sink; any client key)."),
            .init("fingerprint", value: "key", help: "With --tls: accept only this server key (full form, or at least its first 12 characters)."),
            .init("identity", value: "path", help: "With --tls: present this key file (made if missing, 0600) instead of a key made in memory."),
            .init("at-once", help: "Members connect all at the same time, as after an outage, each again when the room answers server-full (room; default: one after another)."),
        ],
        discussion: """
            MODES (each prints one JSON object per phase on stdout):
              flood     Join as a member and send --count TEXT frames of --size payload bytes.
              sink      Accept one connection and count TEXT frames until --count arrived.
              ping      Join a room served with 'svc-publish --echo'; time --count echoed TEXTs
                        (p50, p99, min, max in microseconds).
              room      Connect --clients members; each sends --messages texts stamped with a
                        sequence number and the send time; checks that every member got every
                        other member's texts exactly once and in order; prints messages/s and
                        delivery latency; then stays idle for --idle seconds.
              register  Register --count instances '<prefix>-N' of _p2pipp._tcp at once with the
                        library; prints when all are confirmed, withdraws them on SIGTERM or EOF.

            TLS:
              --tls wraps each connection in protocol version 2's TLS 1.3 stage, presenting one key
              for this run: made in memory, or --identity's file (a room binds member names to
              keys, so members that should get their names back present the same file). svc-bench is a load generator, not a member to trust:
              it reads and writes no known_peers, and without --fingerprint it accepts whatever key
              the server presents. sink --tls accepts one TLS 1.3 client (ALPN p2pm/2, any client
              key) and counts the TEXT frames inside. Without --tls it speaks plaintext protocol v1, which a room
              lets in only with 'svc-publish --allow-plaintext'.

            EXIT STATUS:
              0 done and every check held, 1 a check failed (lost, duplicated or reordered
              messages), 64 bad arguments, 75 a phase timed out.
            """)

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        guard parsed.positionals.count == 1, let mode = Mode(rawValue: parsed.positionals[0]) else {
            throw UsageError("give one mode: \(Mode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.mode = mode
        if let text = parsed.value("to") { target = try Self.endpoint(text) }
        if [.flood, .ping, .room].contains(mode), target == nil { throw UsageError("\(mode.rawValue) needs --to ipv4:port") }
        if let text = parsed.value("port") { port = try parsePort(text, option: "port") }
        count = try Self.positive(parsed.value("count"), option: "count", default: mode == .register ? 200 : count)
        size = try Self.positive(parsed.value("size"), option: "size", default: size)
        batch = try Self.positive(parsed.value("batch"), option: "batch", default: batch)
        if parsed.value("batch") != nil, mode != .flood { throw UsageError("--batch applies to flood only") }
        if size < 4 || size > 65_536 { throw UsageError("--size must be 4 to 65536 bytes") }
        clients = try Self.positive(parsed.value("clients"), option: "clients", default: clients)
        messages = try Self.positive(parsed.value("messages"), option: "messages", default: messages, allowZero: true)
        if let text = parsed.value("idle") { idle = try parseSeconds(text, option: "idle") }
        if let text = parsed.value("heartbeat") { heartbeat = try parseSeconds(text, option: "heartbeat") }
        if let text = parsed.value("timeout") { timeout = try parseSeconds(text, option: "timeout") }
        if let text = parsed.value("prefix") { prefix = text }
        tls = parsed.flag("tls")
        if tls, ![.flood, .sink, .ping, .room].contains(mode) { throw UsageError("--tls applies to flood, sink, ping and room, not \(mode.rawValue)") }
        if let text = parsed.value("fingerprint") {
            guard tls else { throw UsageError("--fingerprint needs --tls") }
            guard PublicKeyFingerprint.isWellFormedPrefix(text) else {
                throw UsageError("--fingerprint takes a key like SHA256:abcdEFGH1234... (the full form or at least its first 12 characters), not '\(text)'")
            }
            fingerprint = text
        }
        identity = parsed.value("identity")
        if identity != nil, !tls { throw UsageError("--identity needs --tls") }
        atOnce = parsed.flag("at-once")
        if atOnce, mode != .room { throw UsageError("--at-once applies to room only") }
    }

    private static func positive(_ text: String?, option: String, default value: Int, allowZero: Bool = false) throws(UsageError) -> Int {
        guard let text else { return value }
        guard let number = Int(text), number > 0 || (allowZero && number == 0) else {
            throw UsageError("--\(option) takes a whole number\(allowZero ? "" : " above 0"), not '\(text)'")
        }
        return number
    }

    /// `a.b.c.d:port` (the benchmark LAN's addresses are IPv4).
    private static func endpoint(_ text: String) throws(UsageError) -> SocketEndpoint {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let octets = parts.first.map { $0.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) } } ?? []
        guard parts.count == 2, octets.count == 4, let address = IPAddress(bytes: octets) else {
            throw UsageError("--to takes an IPv4 address and a port, e.g. 10.77.0.1:4242, not '\(text)'")
        }
        return SocketEndpoint(address: address, port: try parsePort(String(parts[1]), option: "to"))
    }
}
