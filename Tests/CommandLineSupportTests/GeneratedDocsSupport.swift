import Foundation
import CommandLineSupport

/// A command with one of each kind of declaration the manual page and the completion scripts
/// are made from.
let documentedSpec = CommandSpec(
    name: "svc-browse", version: "1.0", overview: "Does things.",
    arguments: [.init("name", help: "The name.")],
    options: [
        .init("type", value: "type", help: "The type (default: _x._tcp)."),
        .init("txt", value: "key=value", repeatable: true, help: "An item; a \\ backslash, [brackets] and 'quotes'."),
        .init("conflict", value: "policy", completion: .values(["rename", "fail"]), help: "rename or fail."),
        .init("send", value: "file", repeatable: true, completion: .file, help: "A file to send."),
        .init("inbox", value: "dir", completion: .directory, help: "Where files go."),
        .init("json", help: ".json output, a line that starts with a dot."),
    ],
    discussion: """
        What it does, at some length,
        over two lines.

        OUTPUT:
          added "<name>" <type>
          removed "<name>" <type>

        KEYS: as ssh's known_hosts, keys are pinned.

        EXIT STATUS (the same for all):
          0    done
          64   bad arguments, a reason that goes on
               to a second line

        EXAMPLES:
          svc-browse --json
        """,
    files: [.init("~/.config/svc/known_peers", help: "The pins.")],
    environment: [.init("XDG_CONFIG_HOME", help: "Where svc/ is.")])

/// Every option's long name, as the generated text must name them.
let documentedOptionNames = Set(documentedSpec.options.map(\.long))

/// The lines of `text` between `.SH title` and the next `.SH`.
func manualSection(_ title: String, in text: String) -> [String] {
    let lines = text.split(separator: "\n").map(String.init)
    guard let start = lines.firstIndex(of: ".SH " + title) else { return [] }
    return Array(lines[(start + 1)...].prefix { !$0.hasPrefix(".SH ") })
}

/// The long option names in a roff section's `.TP` tags: `\fB\-\-type\fR \fItype\fR` → `type`.
func taggedOptionNames(_ lines: [String]) -> [String] {
    zip(lines, lines.dropFirst()).filter { $0.0 == ".TP" }.flatMap { _, tag in
        tag.components(separatedBy: "\\fB\\-\\-").dropFirst().map { String($0.components(separatedBy: "\\fR")[0].replacing("\\-", with: "-")) }
    }
}
