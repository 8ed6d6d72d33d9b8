import CommandLineSupport
import Messaging
import MessagingCommandLine
import TransportCore
import TransportPOSIX

/// How svc-publish prints what happens in its room. Joins and leaves print 50 lines in 10 s
/// each at most, then one line with how many more there were: a host that joins and leaves in
/// a loop cannot flood the log.
///
/// - Important: used on the room's event loop only (asserted); summaries are printed there too.
final class RoomOutput {
    private let output: EventOutput
    private let loop: EventLoop
    private let joins: LimitedReports
    private let leaves: LimitedReports

    init(output: EventOutput, loop: EventLoop) {
        self.output = output
        self.loop = loop
        let scheduler = loop
        joins = LimitedReports(burst: 50, scheduler: scheduler) { Console.note("not shown one by one in the last 10 s: \(counted($0, "more member", "more members")) joined") }
        leaves = LimitedReports(burst: 50, scheduler: scheduler) { Console.note("not shown one by one in the last 10 s: \(counted($0, "more member", "more members")) left") }
    }

    func print(_ event: RoomServer.Event) {
        loop.assertOnExecutor()
        switch event {
        case .joined(let id, let name, let peer, let session):
            guard joins.admit() else { return }
            let secured = session.map { " (key \($0.peerKey.short), safety code \($0.safetyCode))" } ?? ""
            output.emit("joined", text: "joined #\(id) \(name)\(secured) from \(peer)",
                        [("client", .integer(id)), ("name", .string(name)), ("peer", .string(peer)),
                         ("key", session.map { .string($0.peerKey.full) } ?? .null),
                         ("safety_code", session.map { .string($0.safetyCode) } ?? .null)])
        case .left(let id, let name, let reason):
            guard leaves.admit() else { return }
            output.emit("left", text: "left #\(id) \(name): \(reason)",
                        [("client", .integer(id)), ("name", .string(name)), ("reason", .string(reason))])
        case .refused(let peer, let reason):
            output.emit("refused", text: "refused \(peer): \(reason)", [("peer", .string(peer)), ("reason", .string(reason))])
        case .text(let from, let to, let text):
            output.emit("text", text: to.map { "\(from) -> \($0): \(text)" } ?? "\(from): \(text)",
                        [("from", .string(from)), ("to", to.map(JSONValue.string) ?? .null), ("text", .string(text))])
        case .file(let from, let fileEvent):
            FileOutput.print(fileEvent, peer: from, output)
        case .fileSent(let to, let result):
            FileOutput.printSent(result, peer: to, output)
        case .note(let text):
            Console.note(text)
        case .roomCodeFailed(let peer, let key, let reason):
            output.emit("room_code_failed", text: "room code failed from \(peer)\(key.map { " (key \($0.short))" } ?? ""): \(reason)",
                        [("peer", .string(peer)), ("key", key.map { .string($0.full) } ?? .null), ("reason", .string(reason))])
        }
    }
}
