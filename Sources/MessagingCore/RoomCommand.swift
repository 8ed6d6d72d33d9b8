/// A line typed into svc-publish or svc-connect: text for everyone, or a command.
public enum RoomCommand: Sendable, Hashable {
    /// Text to every member. A line starting with `//` sends the rest with one `/`.
    case say(String)
    /// `/msg <peer> <text>`
    case message(to: String, text: String)
    /// `/who`
    case who
    /// `/send <path>` (from a member: to the server), `/send <peer> <path>` (to that member)
    case send(to: String?, path: String)
    /// `/help`
    case help
    /// `/quit`: leave (svc-connect: once what was typed is delivered, as at end of input;
    /// svc-publish: close the room, as on SIGINT).
    case quit

    /// What a member (svc-connect) can type, for `/help` and for mistakes.
    public static let summary = "commands: /msg <name> <text>; /send <path> (a file to the publisher); "
        + "/send <name> <path> (a file to a member, through the room, into their --inbox); /who; /help; /quit. " + rules
    /// What the publisher (svc-publish) can type.
    public static let publisherSummary = "commands: /msg <name> <text>; /send <name> <path> (a file into the member's --inbox); /who; /help; /quit. " + rules
    /// How names and paths are written, for both.
    static let rules = "A name or path with spaces goes in double quotes (/msg \"Living room\" hi; \\\" is a quote inside); "
        + "a path starting with ~/ is in your home directory; start a line with // to send a literal /; the publisher relays /msg text and can read it"

    /// Parses a typed line.
    /// - Parameter peerInSend: whether `/send` always names a peer first (on the server); a
    ///   member's `/send` names one only when something follows the first word.
    /// - Throws: a description of the mistake, including the summary for that tool.
    public init(parsing line: String, peerInSend: Bool) throws(ProtocolError) {
        guard line.hasPrefix("/") else { self = .say(line); return }
        if line.hasPrefix("//") { self = .say(String(line.dropFirst())); return }
        let command = line.prefix { $0 != " " }
        let rest = line[command.endIndex...].drop { $0 == " " }
        let summary = peerInSend ? Self.publisherSummary : Self.summary
        func mistake(_ text: String) -> ProtocolError { ProtocolError(.malformedFrame, "\(text); \(summary)") }
        switch command {
        case "/msg":
            guard let (name, text) = try Self.firstArgument(of: rest, mistake), !text.isEmpty else {
                throw mistake("/msg needs a name and a text")
            }
            self = .message(to: name, text: String(text))
        case "/who":
            guard rest.isEmpty else { throw mistake("/who takes nothing after it") }
            self = .who
        case "/send":
            guard let (first, after) = try Self.firstArgument(of: rest, mistake) else {
                throw mistake(peerInSend ? "/send needs a name and a path" : "/send needs a path")
            }
            if after.isEmpty {
                guard !peerInSend else { throw mistake("/send needs a name and a path") }
                self = .send(to: nil, path: first)
            } else {
                guard let (path, left) = try Self.firstArgument(of: after, mistake), left.isEmpty || !after.hasPrefix("\"") else {
                    throw mistake("a path in double quotes must end the line")
                }
                // Unquoted, the path is the rest of the line, spaces and all.
                self = .send(to: first, path: after.hasPrefix("\"") ? path : String(after))
            }
        case "/help": self = .help
        case "/quit":
            guard rest.isEmpty else { throw mistake("/quit takes nothing after it") }
            self = .quit
        default: throw mistake("unknown command \(command)")
        }
    }

    /// The first argument of `text` and what follows it (spaces after it skipped), or nil
    /// when `text` is empty. An argument is a run of characters other than space, or text in
    /// double quotes, where `\"` stands for a quote and `\\` for a backslash.
    /// - Throws: the mistake for a quote that is not closed or an empty quoted argument.
    static func firstArgument(of text: Substring, _ mistake: (String) -> ProtocolError) throws(ProtocolError) -> (String, Substring)? {
        guard let first = text.first else { return nil }
        guard first == "\"" else {
            let word = text.prefix { $0 != " " }
            return (String(word), text[word.endIndex...].drop { $0 == " " })
        }
        var argument = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if character == "\"" {
                guard !argument.isEmpty else { throw mistake("a name or path in double quotes cannot be empty") }
                guard index == text.endIndex || text[index] == " " else { throw mistake("a closing double quote must be followed by a space") }
                return (argument, text[index...].drop { $0 == " " })
            }
            if character == "\\", index < text.endIndex, text[index] == "\"" || text[index] == "\\" {
                argument.append(text[index])
                index = text.index(after: index)
            } else {
                argument.append(character)
            }
        }
        throw mistake("the double quote before \(argument.prefix(40)) is not closed")
    }

    /// The command with a `/send` path that starts with `~/` (or is `~`) taken from `home`,
    /// the user's home directory; other commands, other paths, or no home: unchanged.
    /// (`~user/` is not expanded.)
    public func expandingHome(_ home: String?) -> RoomCommand {
        guard case .send(let to, let path) = self, let home, !home.isEmpty, path == "~" || path.hasPrefix("~/") else { return self }
        let base = home.hasSuffix("/") && home.count > 1 ? String(home.dropLast()) : home
        return .send(to: to, path: base + path.dropFirst())
    }
}
