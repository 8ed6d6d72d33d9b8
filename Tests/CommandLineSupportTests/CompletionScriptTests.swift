import CommandLineSupport
import XCTest

/// Each shell's completion script offers every option of the command and no other, and the
/// values the declarations know.
final class CompletionScriptTests: XCTestCase {
    func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! Regex<(Substring, Substring)>(pattern)
        return text.matches(of: regex).map { String($0.output.1) }
    }

    func testBashOffersEveryOptionAndNothingElse() {
        let script = documentedSpec.completionScript(for: .bash)
        let offered = matches(#"compgen -W '(-h --[^']*)' -- "\$cur""#, in: script).first?.split(separator: " ").map(String.init) ?? []
        XCTAssertEqual(Set(offered.filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) }), documentedOptionNames, script)
        XCTAssertEqual(offered.count, documentedSpec.options.count + 1, "each long name once, and -h")
        XCTAssertEqual(Set(matches(#"--([a-z0-9-]+)"#, in: script)), documentedOptionNames, "no other option anywhere")
        let valued = matches(#"\n        --([a-z0-9-]+)\) "#, in: script)
        XCTAssertEqual(Set(valued), Set(documentedSpec.options.filter { $0.valueName != nil }.map(\.long)))
        XCTAssertTrue(script.contains("--conflict) mapfile -t COMPREPLY < <(compgen -W 'rename fail' -- \"$cur\")"), script)
        XCTAssertTrue(script.contains("--send) compopt -o filenames; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")"), script)
        XCTAssertTrue(script.contains("--inbox) compopt -o filenames; mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")"), script)
        XCTAssertTrue(script.contains("--generate-completion-script) mapfile -t COMPREPLY < <(compgen -W 'bash zsh fish' -- \"$cur\")"), script)
        XCTAssertTrue(script.hasSuffix("complete -F _svc_browse svc-browse\n"), script)
    }

    func testZshDeclaresEveryOptionAndNothingElse() {
        let script = documentedSpec.completionScript(for: .zsh)
        XCTAssertTrue(script.hasPrefix("#compdef svc-browse\n"))
        let declared = matches(#"\n    '(?:\([^)]*\))?\*?--([a-z0-9-]+)=?\["#, in: script)
        XCTAssertEqual(declared.sorted(), documentedOptionNames.sorted(), script)
        XCTAssertTrue(script.contains("'(-h --help)-h[Show help information.]'"))
        XCTAssertTrue(script.contains("'--conflict=[rename or fail.]:policy:(rename fail)'"), script)
        XCTAssertTrue(script.contains("'*--send=[A file to send.]:file:_files'"), script)
        XCTAssertTrue(script.contains("'--inbox=[Where files go.]:dir:_files -/'"), script)
        XCTAssertTrue(script.contains("'*--txt=[An item; a \\\\ backslash, \\[brackets\\] and '\\''quotes'\\''.]:key=value: '"), script)
        XCTAssertTrue(script.contains("'--type=[The type (default\\: _x._tcp).]:type: '"), script)
        XCTAssertTrue(script.hasSuffix("    ':name: '\n"), "the argument: no values to offer")
    }

    func testFishDeclaresEveryOptionAndNothingElse() {
        let script = documentedSpec.completionScript(for: .fish)
        let declared = matches(#" -l ([a-z0-9-]+)"#, in: script)
        XCTAssertEqual(declared.sorted(), documentedOptionNames.sorted(), script)
        XCTAssertTrue(script.contains("\ncomplete -c svc-browse -f\n"), "no file names unless asked for")
        XCTAssertTrue(script.contains("complete -c svc-browse -s h -l help -d 'Show help information.'"))
        XCTAssertTrue(script.contains("complete -c svc-browse -l conflict -x -a 'rename fail' -d 'rename or fail.'"), script)
        XCTAssertTrue(script.contains("complete -c svc-browse -l send -r -F -d 'A file to send.'"), script)
        XCTAssertTrue(script.contains("complete -c svc-browse -l inbox -x -a '(__fish_complete_directories (commandline -ct))'"), script)
        XCTAssertTrue(script.contains("-l txt -x -d 'An item; a \\\\ backslash, [brackets] and \\'quotes\\'.'"), script)
        XCTAssertTrue(script.contains("complete -c svc-browse -l json -d"), "a flag takes no value")
    }

    func testAFlagHasNoValueCompletionEvenIfOneIsGiven() {
        XCTAssertNil(CommandSpec.Option("json", completion: .file, help: "x").completion)
    }
}
