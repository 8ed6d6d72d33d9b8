import CommandLineSupport
import Messaging
import MessagingCommandLine
import Synchronization
import TransportCore

/// How svc-connect prints what happens: room traffic on stdout, connection notes on stderr.
final class ConnectOutput: Sendable {
    private let output: EventOutput
    private let server: Mutex<String>
    private let failures = Mutex(0)

    init(output: EventOutput, serviceName: String) {
        self.output = output
        server = Mutex(serviceName)
    }

    /// Lines and files that could not be delivered.
    var undelivered: Int { failures.withLock { $0 } }

    func print(_ event: RoomClient.Event) {
        switch event {
        case .connected(let winner, let all):
            let family = winner.address.family == .ipv6 ? "IPv6" : "IPv4"
            Console.note("connected to \"\(server.withLock { $0 })\" at \(winner) (\(family), the first to answer of: \(all.map(\.addressWithScope).joined(separator: ", ")))")
        case .serverHello(let name):
            server.withLock { $0 = name }
            output.emit("hello", text: "hello from \(name)", [("from", .string(name))])
        case .joined(let name):
            output.emit("joined", text: "* joined as \(name)", [("name", .string(name))])
        case .text(let from, let to, let text):
            output.emit("text", text: to == nil ? "\(from): \(text)" : "\(from) (private): \(text)",
                        [("from", .string(from)), ("to", to.map(JSONValue.string) ?? .null), ("text", .string(text))])
        case .presence(let kind, let names):
            let list = names.joined(separator: ", ")
            let text = switch kind {
            case .list: "* in the room: \(list)"
            case .joined: "* \(list) joined"
            case .left: "* \(list) left"
            }
            output.emit("presence", text: text, [("kind", .string("\(kind)")), ("names", .array(names.map(JSONValue.string)))])
        case .serverError(let text): Console.note("the server says: \(text)")
        case .suppressed(let count, let what): Console.note("\(count) more \(what) in the last 10 s were not shown one by one")
        case .disconnected(let reason): Console.note("connection lost (\(reason))")
        case .roomClosed(let reason):
            Console.note("the room closed: the server \(reason); waiting for it to come back \u{2014} Ctrl-C to leave")
        case .reconnecting(let delay, let attempt):
            Console.note("reconnecting in \(delay.secondsText) (attempt \(attempt))")
        case .reconnectFailed(let reason): Console.note("reconnecting failed: \(reason)")
        case .file(let fileEvent): FileOutput.print(fileEvent, peer: server.withLock { $0 }, output)
        case .fileSent(_, let result):
            if case .failure = result { failures.withLock { $0 += 1 } }
            FileOutput.printSent(result, peer: server.withLock { $0 }, output)
        case .notSent(let line):
            failures.withLock { $0 += 1 }
            Console.error("not sent: \(line)")
        }
    }
}
