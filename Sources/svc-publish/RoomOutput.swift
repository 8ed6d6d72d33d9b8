import CommandLineSupport
import Messaging
import MessagingCommandLine

/// How svc-publish prints what happens in its room.
enum RoomOutput {
    static func print(_ event: RoomServer.Event, _ output: EventOutput) {
        switch event {
        case .joined(let id, let name, let peer):
            output.emit("joined", text: "joined #\(id) \(name) from \(peer)",
                        [("client", .integer(id)), ("name", .string(name)), ("peer", .string(peer))])
        case .left(let id, let name, let reason):
            output.emit("left", text: "left #\(id) \(name) (\(reason))",
                        [("client", .integer(id)), ("name", .string(name)), ("reason", .string(reason))])
        case .refused(let peer, let reason):
            output.emit("refused", text: "refused \(peer) (\(reason))", [("peer", .string(peer)), ("reason", .string(reason))])
        case .text(let from, let to, let text):
            output.emit("text", text: to.map { "\(from) -> \($0): \(text)" } ?? "\(from): \(text)",
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
