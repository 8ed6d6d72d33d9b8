import CommandLineSupport
import Dispatch
import Messaging
import MessagingCore
import TransportPOSIX

/// One-way small messages: `flood` sends them through the library, `sink` receives them
/// through it (Benchmarks/frame-writer.c and frame-sink.c are the C counterparts).
enum Flood {
    /// Sends HELLO, then `count` TEXT frames whose payload is `size` bytes, as fast as the
    /// connection drains (through TLS with `security`); returns when the sink has closed.
    static func send(_ options: BenchOptions, security: ClientSecurity?) async throws -> ExitCode {
        let loop = try EventLoop(name: "bench-flood")
        defer { loop.shutdown() }
        // TEXT payload: from (u16 length, empty), to (u16 length, empty), then the text.
        let text = String(repeating: "x", count: options.size - 4)
        let started = monotonicNanoseconds()
        let ended = AsyncStream<PeerLink.EndReason>.makeStream()
        let link = try await join(options.target!, as: options.prefix, loop: loop, heartbeat: .seconds(3600), timeout: options.timeout,
                                  security: security, onMessage: { _ in }, onEnd: { ended.continuation.yield($0) })
        loop.execute {
            var sent = 0
            // Sent `--batch` (64) at a time, as a program with many lines at hand would
            // (`PeerLink.send(contentsOf:)`); each batch is made anew, as such a program would
            // make it. `--batch 1` sends each message alone (`PeerLink.send(_:)`), as a room relays.
            var batch: [Message] = []
            func fill() {
                while sent < options.count, link.connection.bufferedByteCount < 1 << 20 {
                    batch.removeAll(keepingCapacity: true)
                    for _ in 0..<min(options.batch, options.count - sent) { batch.append(.text(from: "", to: "", text: text)) }
                    if batch.count == 1 {
                        guard link.send(batch[0]) else { return }
                    } else {
                        guard link.send(contentsOf: batch) else { return }
                    }
                    sent += batch.count
                }
                if sent == options.count {
                    link.connection.whenDrained(nil)
                    link.connection.finish()
                }
            }
            link.connection.whenDrained(fill)
            fill()
        }
        var reason: PeerLink.EndReason?
        for await end in ended.stream { reason = end; break }
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        report("flood", [("messages", .integer(options.count)), ("payload_bytes", .integer(options.size)),
                         ("microseconds", .integer(Int(seconds * 1e6))), ("end", .string(reason?.description ?? "?"))])
        return .success
    }

    /// Accepts one connection (through TLS with `security`, as its server) and times the
    /// arrival of `count` TEXT frames, first to last.
    static func receive(_ options: BenchOptions, security: ClientSecurity?) async throws -> ExitCode {
        let loop = try EventLoop(name: "bench-sink")
        defer { loop.shutdown() }
        let listener = try TCPListener(port: options.port)
        report("listening", [("port", .integer(Int(listener.port)))])
        let finished = AsyncStream<(messages: Int, nanoseconds: UInt64)>.makeStream()
        let state = SinkState()
        listener.start(on: loop) { socket, peer in
            guard !state.accepted else { return }
            state.accepted = true
            let connection = Connection(socket: socket, peer: peer, loop: loop)
            let stream: any ByteStream
            do {
                stream = try security?.serve(connection, loop: loop) ?? connection
            } catch {
                Console.error("\(error)")
                connection.close()
                finished.continuation.yield((0, 0))
                return
            }
            let link = PeerLink(stream, scheduler: loop, handshakeTimeout: nil, heartbeatInterval: .seconds(3600))
            link.start(onMessage: { message in
                guard case .text = message else { return }
                if state.received == 0 { state.first = monotonicNanoseconds() }
                state.received += 1
                if state.received == options.count {
                    finished.continuation.yield((state.received, monotonicNanoseconds() - state.first))
                    link.connection.close()
                }
            }, onEnd: { _ in
                finished.continuation.yield((state.received, state.received > 0 ? monotonicNanoseconds() - state.first : 0))
            })
        }
        var result = (messages: 0, nanoseconds: UInt64(0))
        for await outcome in finished.stream { result = outcome; break }
        listener.cancel()
        report("sink", [("messages", .integer(result.messages)), ("microseconds", .integer(Int(result.nanoseconds / 1000))),
                        ("messages_per_second", .integer(result.nanoseconds > 0 ? Int(Double(max(result.messages - 1, 0)) * 1e9 / Double(result.nanoseconds)) : 0))])
        guard result.messages == options.count else {
            throw ToolFailure(.failure, "the connection ended after \(result.messages) of \(options.count) messages")
        }
        return .success
    }
}

/// What the sink counted. - Important: used only on the sink's loop.
private final class SinkState: @unchecked Sendable {
    var accepted = false
    var received = 0
    var first: UInt64 = 0
}
