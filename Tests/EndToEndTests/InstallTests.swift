import Foundation
import XCTest

/// Scripts/install into a temporary prefix, with the tools this test run built (--bin-dir, so
/// no release build): every file where it belongs, manual pages that groff and man render
/// without a warning and that list the options --help lists, completion scripts each shell
/// accepts and that offer those options, and an uninstall that leaves the prefix as it was.
/// Needs no LAN; Scripts/install-deps installs groff, man-db, zsh and fish.
final class InstallTests: XCTestCase {
    let script = Readme.root.appendingPathComponent("Scripts/install").path

    /// Runs a command to its end; its status, stdout and stderr.
    @discardableResult
    func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws
        -> (status: Int32?, out: [String], err: [String]) {
        var merged = ProcessInfo.processInfo.environment
        merged["SVC_BIN_DIR"] = nil
        merged.merge(environment) { $1 }
        let process = try ToolProcess(executable, arguments, label: URL(fileURLWithPath: executable).lastPathComponent, environment: merged)
        process.closeStdin()
        let status = process.waitForExit(timeout: timeout)
        process.waitForOutputToEnd(timeout: 30)
        return (status, process.stdout, process.stderr)
    }

    func temporaryPrefix() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("svc-install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Every path under `root` with its contents (directories as "dir"; bytes that are not
    /// UTF-8 as U+FFFD, enough to compare).
    func snapshot(_ root: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        let paths = try FileManager.default.subpathsOfDirectory(atPath: root.path)
        for path in paths {
            var isDirectory: ObjCBool = false
            let full = root.appendingPathComponent(path).path
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
            result[path] = isDirectory.boolValue ? "dir" : String(decoding: FileManager.default.contents(atPath: full) ?? Data(), as: UTF8.self)
        }
        return result
    }

    /// The long option names `--help` lists under OPTIONS.
    func helpOptions(_ tool: String) throws -> [String] {
        let help = try run(TestLAN.tool(tool), ["--help"])
        XCTAssertEqual(help.status, 0, help.err.joined(separator: "\n"))
        let options = help.out.drop { $0 != "OPTIONS:" }.dropFirst().prefix { !$0.isEmpty }
        return options.compactMap { line in
            guard line.hasPrefix("  -") else { return nil }
            return line.split(separator: " ").first { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) }
        }
    }

    /// The long option names a manual page tags in its OPTIONS section (`\fB\-\-name\fR`).
    func manualOptions(_ page: String) -> [String] {
        let lines = page.components(separatedBy: "\n")
        let section = lines.drop { $0 != ".SH OPTIONS" }.dropFirst().prefix { !$0.hasPrefix(".SH ") }
        return zip(section, section.dropFirst()).filter { $0.0 == ".TP" }.compactMap { _, tag in
            tag.components(separatedBy: "\\fB\\-\\-").dropFirst().first.map { $0.components(separatedBy: "\\fR")[0].replacingOccurrences(of: "\\-", with: "-") }
        }
    }

    /// The long option names a completion script offers, as each shell declares them.
    func completionOptions(_ script: String, shell: String) throws -> [String] {
        let pattern: String
        switch shell {
        case "bash": pattern = #"compgen -W '(-[^']*)' -- "\$cur""#
        case "zsh": pattern = #"\n    '(?:\([^)]*\))?\*?--([a-z0-9-]+)=?\["#
        default: pattern = #"\ncomplete -c \S+ (?:-s \S )?-l ([a-z0-9-]+)"#
        }
        let regex = try NSRegularExpression(pattern: pattern)
        let found = regex.matches(in: script, range: NSRange(script.startIndex..., in: script)).compactMap { Range($0.range(at: 1), in: script).map { String(script[$0]) } }
        guard shell == "bash" else { return found }
        // The long options (the short ones are listed first: `-v -h --avahi-config ...`).
        return found.flatMap { $0.split(separator: " ").filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) } }
    }

    func testInstallPutsEverythingInPlaceAndUninstallLeavesThePrefixAsItWas() throws {
        let prefix = try temporaryPrefix()
        // Someone else's files and a directory that was there: kept as they are.
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("share/man/man1"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("share/zsh"), withIntermediateDirectories: true)
        try "not ours\n".write(to: prefix.appendingPathComponent("share/man/man1/other.1"), atomically: true, encoding: .utf8)
        let before = try snapshot(prefix)

        let listed = try run(script, ["--list"])
        XCTAssertEqual(listed.status, 0)
        let tools = listed.out
        XCTAssertTrue(Set(["svc-publish", "svc-browse", "svc-connect"]).isSubset(of: tools), "\(tools)")

        let install = try run(script, ["--prefix", prefix.path, "--bin-dir", TestLAN.binDirectory])
        XCTAssertEqual(install.status, 0, install.err.joined(separator: "\n"))
        let installed = try snapshot(prefix).keys.filter { before[$0] == nil }

        var expected: Set<String> = ["share/svc", "share/svc/install-manifest"]
        for tool in tools {
            let section = tool == "svc-doctor" ? 8 : 1
            let page = "share/man/man\(section)/\(tool).\(section)"
            let files = ["bin/\(tool)", page, "share/bash-completion/completions/\(tool)", "share/zsh/site-functions/_\(tool)",
                         "share/fish/vendor_completions.d/\(tool).fish"]
            expected.formUnion(files)
            XCTAssertEqual(FileManager.default.contents(atPath: prefix.appendingPathComponent("bin/\(tool)").path),
                           FileManager.default.contents(atPath: TestLAN.tool(tool)), "bin/\(tool) is the built tool")
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("bin/\(tool)").path))

            // The manual page: groff reads it without a warning, man renders it, and its
            // options are the ones --help lists.
            let pagePath = prefix.appendingPathComponent(page).path
            let groff = try run("/usr/bin/groff", ["-ww", "-z", "-man", pagePath])
            XCTAssertEqual(groff.status, 0, "\(page): " + groff.err.joined(separator: "\n"))
            XCTAssertEqual(groff.err, [], page)
            let man = try run("/usr/bin/man", ["-l", pagePath], environment: ["MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": "0"])
            XCTAssertEqual(man.status, 0, "man -l \(page): " + man.err.joined(separator: "\n"))
            XCTAssertEqual(man.err, [], "man -l \(page) warns")
            // man overstrikes bold (X\bX) when not writing to a terminal; the words, spaces collapsed.
            let shown = man.out.map { line in
                line.replacingOccurrences(of: ".\u{08}", with: "", options: .regularExpression).split(separator: " ").joined(separator: " ")
            }
            XCTAssertTrue(shown.contains { $0.hasPrefix("\(tool) - ") }, "man -l \(page) shows NAME: \(shown.prefix(8))")
            XCTAssertTrue(shown.contains("OPTIONS") && shown.contains("SEE ALSO"), "man -l \(page): \(shown)")
            let help = try helpOptions(tool)
            XCTAssertFalse(help.isEmpty, "\(tool) --help lists options")
            let roff = try String(contentsOfFile: pagePath, encoding: .utf8)
            XCTAssertTrue(roff.hasPrefix(".TH \"\(tool.uppercased().replacingOccurrences(of: "-", with: "\\-"))\" \"\(section)\""), page)
            XCTAssertEqual(manualOptions(roff), help, "\(page) lists the options --help lists, in its order")

            // Each completion script: its shell accepts it, it offers --help's options.
            for (shell, path) in [("bash", files[2]), ("zsh", files[3]), ("fish", files[4])] {
                let file = prefix.appendingPathComponent(path).path
                let check = try run("/usr/bin/env", [shell, "-n", file])
                XCTAssertEqual(check.status, 0, "\(shell) -n \(path): " + check.err.joined(separator: "\n"))
                let text = try String(contentsOfFile: file, encoding: .utf8)
                XCTAssertEqual(try completionOptions(text, shell: shell).sorted(), help.sorted(), "\(path) offers --help's options")
            }
            // bash and fish complete for real: option names, and a value the declaration knows.
            let bash = try run("/bin/bash", ["-c", """
                source "$1"; f=$(complete -p \(tool) | awk '{print $3}')
                COMP_WORDS=(\(tool) --gen); COMP_CWORD=1; $f; echo "${COMPREPLY[*]}"
                COMP_WORDS=(\(tool) --generate-completion-script z); COMP_CWORD=2; $f; echo "${COMPREPLY[*]}"
                """, "bash", prefix.appendingPathComponent(files[2]).path])
            XCTAssertEqual(bash.out, ["--generate-completion-script --generate-manual", "zsh"], bash.err.joined(separator: "\n"))
            let fish = try run("/usr/bin/env", ["fish", "--no-config", "-c", "source $argv[1]; complete -C '\(tool) --generate-completion-script '",
                                                prefix.appendingPathComponent(files[4]).path])
            XCTAssertEqual(fish.out.map { String($0.prefix { $0 != "\t" }) }, ["bash", "fish", "zsh"], fish.err.joined(separator: "\n"))
        }
        let bins = Set(tools.map { "bin/\($0)" })
        expected.formUnion(["bin", "share/bash-completion", "share/bash-completion/completions", "share/zsh/site-functions", "share/fish",
                            "share/fish/vendor_completions.d"])
        expected.formUnion(Set(tools.map { $0 == "svc-doctor" ? "share/man/man8" : "share/man/man1" }).filter { before[$0] == nil })
        XCTAssertEqual(Set(installed), expected, "what install put under the prefix")
        XCTAssertTrue(bins.allSatisfy(expected.contains))

        let uninstall = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(uninstall.status, 0, uninstall.err.joined(separator: "\n"))
        XCTAssertEqual(try snapshot(prefix), before, "uninstall leaves the prefix as it was")
        let again = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(again.status, 66)
        XCTAssertTrue(again.err.first?.contains("nothing to uninstall") ?? false, again.err.joined(separator: "\n"))
    }

    func testUninstallKeepsAFileChangedSinceInstall() throws {
        let prefix = try temporaryPrefix()
        XCTAssertEqual(try run(script, ["--prefix", prefix.path, "--bin-dir", TestLAN.binDirectory]).status, 0)
        let changed = prefix.appendingPathComponent("share/bash-completion/completions/svc-browse")
        try "# my own\n".write(to: changed, atomically: true, encoding: .utf8)
        let uninstall = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(uninstall.status, 0)
        XCTAssertTrue(uninstall.err.contains { $0.contains("kept \(changed.path): it changed since it was installed") }, uninstall.err.joined(separator: "\n"))
        XCTAssertEqual(try snapshot(prefix), ["share": "dir", "share/bash-completion": "dir", "share/bash-completion/completions": "dir",
                                              "share/bash-completion/completions/svc-browse": "# my own\n"])
    }

    func testAPrefixThatCannotBeWrittenIsRefusedBeforeBuilding() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root, to run the script as nobody") }
        let prefix = try temporaryPrefix()
        let result = try run("/usr/sbin/runuser", ["-u", "nobody", "--", script, "--prefix", prefix.appendingPathComponent("sub").path])
        XCTAssertEqual(result.status, 77)
        XCTAssertEqual(result.err.count, 1, result.err.joined(separator: "\n"))
        XCTAssertTrue(result.err.first?.hasPrefix("install: error: cannot write to \(prefix.path) (as nobody): install as root") ?? false, "\(result.err)")
        XCTAssertTrue(result.err.first?.contains("--prefix") ?? false)
        XCTAssertEqual(try snapshot(prefix), [:])
    }

    /// The attack: someone who can write the prefix links a directory in it to one outside
    /// and lists a file there (its SHA-256 is easy to compute) in the manifest.
    func testUninstallRefusesAnEntryThroughASymbolicLinkAndRemovesNothing() throws {
        let prefix = try temporaryPrefix()
        let outside = try temporaryPrefix()
        let victim = outside.appendingPathComponent("passwd")
        try "precious\n".write(to: victim, atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(script, ["--prefix", prefix.path, "--bin-dir", TestLAN.binDirectory]).status, 0)
        try FileManager.default.createSymbolicLink(at: prefix.appendingPathComponent("share/x"), withDestinationURL: outside)
        let manifest = prefix.appendingPathComponent("share/svc/install-manifest")
        let sum = try run("/usr/bin/sha256sum", [victim.path]).out.first?.split(separator: " ").first.map(String.init) ?? ""
        let handle = try FileHandle(forWritingTo: manifest)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("file \(sum) share/x/passwd\ndir share/x\n".utf8))
        try handle.close()
        let before = try snapshot(prefix)

        let uninstall = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(uninstall.status, 65, uninstall.err.joined(separator: "\n"))
        XCTAssertEqual(uninstall.err, ["install: error: the manifest \(manifest.path) has an entry through the symbolic link "
                                       + "\(prefix.path)/share/x: 'share/x/passwd'; nothing was removed; remove the files by hand"])
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "precious\n", "the file outside the prefix is kept")
        XCTAssertEqual(try snapshot(prefix), before, "nothing under the prefix was removed either")
    }

    func testUninstallRefusesAManifestSomeoneElseCouldHaveWritten() throws {
        let prefix = try temporaryPrefix()
        XCTAssertEqual(try run(script, ["--prefix", prefix.path, "--bin-dir", TestLAN.binDirectory]).status, 0)
        let manifest = prefix.appendingPathComponent("share/svc/install-manifest").path
        let before = try snapshot(prefix)

        try FileManager.default.setAttributes([.posixPermissions: 0o664], ofItemAtPath: manifest)
        let groupWritable = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(groupWritable.status, 65, groupWritable.err.joined(separator: "\n"))
        XCTAssertEqual(groupWritable.err, ["install: error: \(manifest) can be written by its group or others (mode 664), so it cannot "
                                           + "say what to delete; nothing was removed; remove the files by hand"])
        XCTAssertEqual(try snapshot(prefix), before)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: manifest)
        guard getuid() == 0 else { throw XCTSkip("needs root, to give the manifest to another user") }
        XCTAssertEqual(chown(manifest, 65534, 65534), 0)
        let foreign = try run(script, ["--uninstall", "--prefix", prefix.path])
        XCTAssertEqual(foreign.status, 65, foreign.err.joined(separator: "\n"))
        XCTAssertEqual(foreign.err, ["install: error: \(manifest) belongs to user 65534, neither you (root) nor root, so it cannot say "
                                     + "what to delete; nothing was removed; remove the files by hand"])
        XCTAssertEqual(try snapshot(prefix), before)
    }

    /// A newline in the prefix would end the manifest's comment line and start an entry.
    func testAPrefixOrBinDirWithAControlCharacterIsAUsageError() throws {
        let base = try temporaryPrefix()
        for arguments in [["--prefix", base.path + "/p\ndir evil", "--bin-dir", TestLAN.binDirectory],
                          ["--prefix", base.path + "/q\tx", "--bin-dir", TestLAN.binDirectory],
                          ["--uninstall", "--prefix", base.path + "/p\nfile"],
                          ["--prefix", base.path + "/r", "--bin-dir", TestLAN.binDirectory + "\n"]] {
            let result = try run(script, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): " + result.err.joined(separator: "\n"))
            XCTAssertEqual(result.err.first, "Error: --prefix and --bin-dir (and $SVC_BIN_DIR) take a directory without control characters (newline, tab, ...)")
        }
        XCTAssertEqual(try snapshot(base), [:], "nothing was made")
    }

    func testHelpAndUsageErrors() throws {
        let help = try run(script, ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertEqual(help.out.first, "OVERVIEW: Install the svc tools, their manual pages and shell completions (or remove them).")
        let wrong = try run(script, ["--prefix"])
        XCTAssertEqual(wrong.status, 64)
        XCTAssertEqual(wrong.err.first, "Error: Missing value for '--prefix <dir>'")
    }
}
