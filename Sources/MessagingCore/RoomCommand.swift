/// A line typed into svc-publish or svc-connect: text for everyone, or a command.
public enum RoomCommand: Sendable, Hashable {
    /// Text to every member. A line starting with `//` sends the rest with one `/`.
    case say(String)
    /// `/msg <peer> <text>`
    case message(to: String, text: String)
    /// `/who`
    case who
    /// `/send <path>` (to the server) or `/send <peer> <path>` (from the server)
    case send(to: String?, path: String)
    /// `/help`
    case help
    /// `/quit`: leave (svc-connect: once what was typed is delivered, as at end of input;
    /// svc-publish: close the room, as on SIGINT).
    case quit

    /// What the commands are, for `/help` and for mistakes.
    public static let summary = "commands: /msg <peer> <text>, /who, /send [<peer>] <path>, /help, /quit; start a line with // to send a literal /"

    /// Parses a typed line.
    /// - Parameter peerInSend: whether `/send` names a peer first (on the server).
    /// - Throws: a description of the mistake, including `summary`.
    public init(parsing line: String, peerInSend: Bool) throws(ProtocolError) {
        guard line.hasPrefix("/") else { self = .say(line); return }
        if line.hasPrefix("//") { self = .say(String(line.dropFirst())); return }
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        func mistake(_ text: String) -> ProtocolError { ProtocolError(.malformedFrame, "\(text); \(Self.summary)") }
        switch words[0] {
        case "/msg":
            guard words.count == 3 else { throw mistake("/msg needs a peer and a text") }
            self = .message(to: words[1], text: words[2])
        case "/who":
            guard words.count == 1 else { throw mistake("/who takes nothing after it") }
            self = .who
        case "/send":
            let rest = line.dropFirst(5).drop(while: { $0 == " " })
            if peerInSend {
                let parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw mistake("/send needs a peer and a path") }
                self = .send(to: parts[0], path: parts[1])
            } else {
                guard !rest.isEmpty else { throw mistake("/send needs a path") }
                self = .send(to: nil, path: String(rest))
            }
        case "/help": self = .help
        case "/quit":
            guard words.count == 1 else { throw mistake("/quit takes nothing after it") }
            self = .quit
        default: throw mistake("unknown command \(words[0])")
        }
    }
}
