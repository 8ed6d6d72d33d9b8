import CommandLineSupport
import Dispatch
import TransportCore
import TransportPOSIX

/// svc-publish's clients: greets each one, prints what they send, and sends standard input
/// to all of them.
/// - Important: every method runs on `queue`, except `closeAll`.
final class PublishServer: @unchecked Sendable {
    private let queue: DispatchQueue
    private let output: EventOutput
    private var name: String
    private var clients: [Int: Client] = [:]
    private var nextID = 1

    private final class Client {
        let id: Int
        let lines: LineConnection
        var greeted = false
        init(id: Int, lines: LineConnection) {
            self.id = id
            self.lines = lines
        }
    }

    init(name: String, queue: DispatchQueue, output: EventOutput) {
        self.name = name
        self.queue = queue
        self.output = output
    }

    func rename(_ newName: String) { name = newName }

    func accept(_ socket: Socket, peer: SocketEndpoint?) {
        let client = Client(id: nextID, lines: LineConnection(Connection(socket: socket, peer: peer, queue: queue)))
        nextID += 1
        clients[client.id] = client
        let from = peer?.description ?? "an unknown address"
        output.emit("connected", text: "connected #\(client.id) from \(from)",
                    [("client", .integer(client.id)), ("peer", .string(from))])
        client.lines.start(onLine: { [unowned self] line in received(line, from: client) },
                           onClose: { [unowned self] reason in closed(client, reason) })
        client.lines.send(line: "hello from \(name)")
    }

    private func received(_ line: String, from client: Client) {
        let kind = client.greeted ? "message" : "greeting"
        client.greeted = true
        output.emit(kind, text: "\(kind) #\(client.id): \(TerminalSafe.escape(line))",
                    [("client", .integer(client.id)), ("text", .string(line))])
    }

    private func closed(_ client: Client, _ reason: Connection.CloseReason) {
        clients[client.id] = nil
        output.emit("disconnected", text: "disconnected #\(client.id) (\(reason))",
                    [("client", .integer(client.id)), ("reason", .string(reason.description))])
    }

    /// Sends a line of standard input to every connected client.
    func broadcast(_ line: String) {
        guard !clients.isEmpty else {
            Console.note("no client is connected; the line was not sent")
            return
        }
        for client in clients.values.sorted(by: { $0.id < $1.id }) where !client.lines.send(line: line) {
            Console.note("the line was not sent to #\(client.id): its connection is closing")
        }
    }

    /// Sends what is queued to each client, closes the connections, and waits until they are
    /// closed or `timeout` passed.
    func closeAll(within timeout: Duration) async {
        queue.sync { clients.values.forEach { $0.lines.connection.finish() } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !queue.sync(execute: { clients.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
