import CommandLineSupport
import Messaging
import MessagingCommandLine
import Synchronization
import TransportCore

/// How svc-connect prints what happens: room traffic on stdout, connection notes and errors
/// on stderr; with `--json`, room traffic, connection notes and errors are all JSON events on
/// stdout (README: "svc-connect --json"), and the notes and errors stay on stderr for people.
final class ConnectOutput: Sendable {
    private let output: EventOutput
    private let server: Mutex<String>
    /// The name we asked for, to tell a rename from a plain join.
    private let requestedName: String
    private let failures = Mutex(0)
    /// The safety code of the secure link we joined over (nil over plaintext), for /who.
    private let safetyCode = Mutex<String?>(nil)

    init(output: EventOutput, serviceName: String, requestedName: String) {
        self.output = output
        server = Mutex(serviceName)
        self.requestedName = requestedName
    }

    /// Lines and files that could not be delivered.
    var undelivered: Int { failures.withLock { $0 } }

    /// A connection note: on stderr, and with `--json` a JSON event on stdout too.
    private func note(_ event: String, _ text: String, _ fields: [(String, JSONValue)]) {
        if output.json { output.emit(event, text: text, fields) }
        Console.note(text)
    }

    /// An error: `<tool>: error: ...` on stderr, and with `--json` a JSON event on stdout too.
    private func error(_ event: String, _ text: String, _ fields: [(String, JSONValue)]) {
        if output.json { output.emit(event, text: text, fields) }
        Console.error(text)
    }

    /// A member's name as printed: the room's own name is its service name, shown as
    /// svc-browse shows one (without the quotes), so an invisible character in it is not
    /// hidden; members' names (which the room checked) as they are.
    private func shown(_ member: String) -> String {
        member == server.withLock({ $0 }) ? TerminalSafe.escape(member, mode: .name) : member
    }

    func print(_ event: RoomClient.Event) {
        switch event {
        case .connected(let winner, let all):
            let family = winner.address.family == .ipv6 ? "IPv6" : "IPv4"
            let name = server.withLock { $0 }
            let tried = all.count <= 1 ? "its only address"
                : "the first to answer of \(counted(all.count, "address", "addresses")): \(all.map(\.addressWithScope).joined(separator: ", "))"
            note("connected", "connected to \(TerminalSafe.quoted(name)) at \(winner) over \(family), \(tried)",
                 [("server", .string(name)), ("address", .string(winner.description)), ("family", .string(family)),
                  ("addresses", .array(all.map { .string($0.addressWithScope) }))])
        case .serverHello(let name):
            server.withLock { $0 = name }
            output.emit("hello", text: "hello from \(shown(name))", [("from", .string(name))])
        case .roomCodeConfirmed(let session):
            output.emit("room_code", text: "* the room proved it knows the room code; its key is \(session.peerKey.short)",
                        [("key", .string(session.peerKey.full))])
        case .joined(let name, let session):
            safetyCode.withLock { $0 = session?.safetyCode }
            let secured = session.map { "; the room's key is \($0.peerKey.short), safety code \($0.safetyCode) (the publisher sees the same code for this connection)" } ?? ""
            output.emit("joined", text: "* joined as \(name)\(secured)",
                        [("name", .string(name)), ("key", session.map { .string($0.peerKey.full) } ?? .null),
                         ("safety_code", session.map { .string($0.safetyCode) } ?? .null)])
            if name != requestedName {
                output.emit("renamed", text: name.hasPrefix(requestedName + "-") ? "* the name \(requestedName) is taken in this room; you are \(name)"
                                : "* the room lists your key under the name \(name); you are \(name), not \(requestedName)",
                            [("requested", .string(requestedName)), ("name", .string(name))])
            }
        case .text(let from, let to, let text):
            output.emit("text", text: to == nil ? "\(shown(from)): \(text)" : "\(shown(from)) to you, privately: \(text)",
                        [("from", .string(from)), ("to", to.map(JSONValue.string) ?? .null), ("text", .string(text))])
        case .history(let from, let text, let time):
            output.emit("history", text: "[history \(HumanTime.format(unixMilliseconds: time))] \(shown(from)): \(text)",
                        [("from", .string(from)), ("text", .string(text)), ("said_at", .string(timestamp(unixMilliseconds: time)))])
        case .presence(let kind, let names, let keys):
            let list = zip(names.map(shown), keys).map { name, key in key.map { "\(name) (key \($0.short))" } ?? name }.joined(separator: ", ")
            let code = safetyCode.withLock { $0 }
            let text = switch kind {
            case .list: "* in the room: \(list)" + (code.map { "; safety code of this connection: \($0)" } ?? "")
            case .joined: "* \(list) joined"
            case .left: "* \(list) left"
            }
            output.emit("presence", text: text, [("kind", .string("\(kind)")), ("names", .array(names.map(JSONValue.string))),
                                                 ("keys", .array(keys.map { $0.map { .string($0.full) } ?? .null }))])
        case .serverError(let text):
            note("server-error", "the server says: \(text)", [("message", .string(text))])
        case .suppressed(let count, let what):
            note("suppressed", "not shown one by one in the last 10 s: \(what), \(count) more",
                 [("count", .integer(count)), ("what", .string(what))])
        case .disconnected(let reason):
            note("disconnected", "connection lost to \(TerminalSafe.quoted(server.withLock { $0 })): \(reason)", [("reason", .string(reason))])
        case .hostChanged(let room, let now, let was):
            note("host-changed", "\(TerminalSafe.quoted(room)) now answers from another host, \(now.addressWithScope), not \(was.addressWithScope): "
                 + "it may be someone else; what was queued for the old room is not sent there (listed below), what you type now goes to this one",
                 [("room", .string(room)), ("address", .string(now.addressWithScope)), ("previous", .string(was.addressWithScope))])
        case .roomClosed(let reason):
            note("room-closed", "the room closed: the server \(reason); waiting for it to come back \u{2014} Ctrl-C to leave",
                 [("reason", .string(reason))])
        case .reconnecting(let delay, let attempt):
            TransferProgress.shared.reconnecting(peer: server.withLock { $0 })
            note("reconnecting", "reconnecting in \(delay.secondsText), attempt \(attempt)",
                 [("delay_ms", .integer(Int(delay.nanoseconds / 1_000_000))), ("attempt", .integer(attempt))])
        case .reconnectFailed(let reason):
            note("reconnect-failed", "reconnecting failed: \(reason)", [("reason", .string(reason))])
        case .file(let fileEvent): FileOutput.print(fileEvent, peer: server.withLock { $0 }, output)
        case .fileSent(let path, let to, let result):
            let peer = to ?? server.withLock { $0 }
            guard case .failure(let failure) = result else {
                return FileOutput.printSent(result, peer: peer, output)
            }
            failures.withLock { $0 += 1 }
            if output.json { output.emit("file-send-failed", text: failure.message, [("path", .string(path)), ("reason", .string(failure.message))]) }
            FileOutput.printSent(result, peer: peer, output)
        case .notSent(let line):
            failures.withLock { $0 += 1 }
            error("not-sent", "not sent: \(line)", [("what", .string(line))])
        }
    }
}
