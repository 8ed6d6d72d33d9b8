import CommandLineSupport
import Dispatch
import Messaging
import MessagingCommandLine
import MessagingCore

/// How svc-publish prints what happens in its room. Joins and leaves print 50 lines in 10 s
/// each at most, then one line with how many more there were: a host that joins and leaves in
/// a loop cannot flood the log.
///
/// - Important: used on the room's queue only (asserted); summaries are printed there too.
final class RoomOutput: @unchecked Sendable {
    private let output: EventOutput
    private let queue: DispatchQueue
    private var joins = ReportLimiter(burst: 50)
    private var leaves = ReportLimiter(burst: 50)

    init(output: EventOutput, queue: DispatchQueue) {
        self.output = output
        self.queue = queue
    }

    func print(_ event: RoomServer.Event) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch event {
        case .joined(let id, let name, let peer):
            guard admit(\.joins, "members joined") else { return }
            output.emit("joined", text: "joined #\(id) \(name) from \(peer)",
                        [("client", .integer(id)), ("name", .string(name)), ("peer", .string(peer))])
        case .left(let id, let name, let reason):
            guard admit(\.leaves, "members left") else { return }
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

    /// Whether to print this one; when not, the count is printed once the period is over.
    private func admit(_ limiter: ReferenceWritableKeyPath<RoomOutput, ReportLimiter> & Sendable, _ what: String) -> Bool {
        let hadSummaryDue = self[keyPath: limiter].summaryDue != nil
        if self[keyPath: limiter].admit(at: .now) { return true }
        if !hadSummaryDue, let due = self[keyPath: limiter].summaryDue {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(max(.zero, due - .now).nanoseconds))) { [self] in
                let count = self[keyPath: limiter].takeSuppressed()
                if count > 0 { Console.note("\(count) more \(what) in the last 10 s were not shown one by one") }
            }
        }
        return false
    }
}
