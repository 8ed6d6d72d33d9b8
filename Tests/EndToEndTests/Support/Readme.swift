import Foundation

/// README.md as it is when the tests run: its fenced code blocks, and the shell commands in
/// its `sh` blocks. Prose is ignored, so it may change freely; commands are taken as written.
struct Readme {
    /// A fenced block: its language (after the opening fence) and its lines.
    struct Block {
        let language: String
        let lines: [String]
        /// The line number of its first line in README.md.
        let firstLine: Int
    }

    /// One shell command of an `sh` block.
    struct Command {
        /// The command as written, without a `$ ` prompt and without a trailing comment.
        let text: String
        /// Its words, unquoted (`"Living room"` is one word).
        let words: [String]
        /// Whether it was written after a `$ ` prompt (an example with its output below it).
        let hasPrompt: Bool
        /// For a prompted command, the output lines printed below it up to the next prompt.
        let output: [String]
        /// Its line number in README.md.
        let line: Int
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let blocks: [Block]

    init(path: String = Readme.root.appendingPathComponent("README.md").path) throws {
        let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var open: (language: String, first: Int)?
        var body: [String] = []
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("```") else {
                if open != nil { body.append(line) }
                continue
            }
            if let current = open {
                blocks.append(Block(language: current.language, lines: body, firstLine: current.first))
                open = nil
                body = []
            } else {
                open = (String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), index + 2)
            }
        }
        self.blocks = blocks
    }

    /// The blocks in `language`.
    func blocks(_ language: String) -> [Block] { blocks.filter { $0.language == language } }

    /// Every command of the `sh` blocks, in order. In a block with `$ ` prompts only the
    /// prompted lines are commands (the others are their output); otherwise every line that
    /// is not blank or a comment is one.
    var commands: [Command] {
        var commands: [Command] = []
        for block in blocks("sh") {
            let prompted = block.lines.contains { $0.hasPrefix("$ ") }
            var index = 0
            while index < block.lines.count {
                let line = block.lines[index]
                let number = block.firstLine + index
                index += 1
                if prompted {
                    guard line.hasPrefix("$ ") else { continue }
                    var output: [String] = []
                    while index < block.lines.count, !block.lines[index].hasPrefix("$ ") {
                        output.append(block.lines[index])
                        index += 1
                    }
                    let (text, words) = Readme.split(String(line.dropFirst(2)))
                    commands.append(Command(text: text, words: words, hasPrompt: true, output: output, line: number))
                } else {
                    let (text, words) = Readme.split(line)
                    guard !words.isEmpty else { continue }
                    commands.append(Command(text: text, words: words, hasPrompt: false, output: [], line: number))
                }
            }
        }
        return commands
    }

    /// A shell line's text without its comment, and its words unquoted (single and double
    /// quotes, backslash escapes outside single quotes).
    static func split(_ line: String) -> (text: String, words: [String]) {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        var end = line.endIndex
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            defer { previous = character }
            if escaped {
                word.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open { quote = nil } else if character == "\\" && open == "\"" { escaped = true } else { word.append(character) }
                continue
            }
            switch character {
            case "#" where previous == " " || previous == "\t":
                end = index
            case "'", "\"":
                quote = character
                inWord = true
            case "\\":
                escaped = true
                inWord = true
            case " ", "\t":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            default:
                word.append(character)
                inWord = true
            }
            if end != line.endIndex { break }
        }
        if inWord { words.append(word) }
        return (String(line[..<end]).trimmingCharacters(in: .whitespaces), words)
    }
}
