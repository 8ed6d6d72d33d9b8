import CommandLineSupport
import Messaging
import MessagingCommandLine

/// How svc-publish prints what happens in its room.
enum RoomOutput {
    static func print(_ event: RoomServer.Event, _ output: EventOutput) {
        let e = TerminalSafe.escape
        switch event {
        case .joined(let id, let name, let peer):
            output.emit("joined", text: "joined #\(id) \(e(name)) from \(peer)",
                        [("client", .integer(id)), ("name", .string(name)), ("peer", .string(peer))])
        case .left(let id, let name, let reason):
            output.emit("left", text: "left #\(id) \(e(name)) (\(e(reason)))",
                        [("client", .integer(id)), ("name", .string(name)), ("reason", .string(reason))])
        case .refused(let peer, let reason):
            output.emit("refused", text: "refused \(peer) (\(e(reason)))", [("peer", .string(peer)), ("reason", .string(reason))])
        case .text(let from, let to, let text):
            output.emit("text", text: to.map { "\(e(from)) -> \(e($0)): \(e(text))" } ?? "\(e(from)): \(e(text))",
                        [("from", .string(from)), ("to", to.map(JSONValue.string) ?? .null), ("text", .string(text))])
        case .file(let from, let fileEvent):
            FileOutput.print(fileEvent, peer: from, output)
        case .fileSent(let to, let result):
            FileOutput.printSent(result, peer: to, output)
        case .note(let text):
            Console.note(text)
        }
    }
}
