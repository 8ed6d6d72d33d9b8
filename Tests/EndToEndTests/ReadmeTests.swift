import Foundation
import XCTest

/// README.md is true as written: every Swift block compiles against the built modules, and
/// every shell command runs (on a virtual LAN of this test's own) and does what its example
/// output says. The README is read when the test runs, so prose may change freely; a command
/// this test does not know how to run fails it, with where to teach it.
final class ReadmeTests: XCTestCase {
    /// Every Swift block is a whole program: compiled (not only type-checked) with the
    /// package's language mode, warnings counted as errors.
    func testEverySwiftBlockCompiles() throws {
        let readme = try Readme()
        let blocks = readme.blocks("swift")
        XCTAssertFalse(blocks.isEmpty, "README.md has no ```swift block: has the fence changed?")
        let work = try temporaryDirectory()
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: Readme.root.appendingPathComponent("Modules").path)
            .map { Readme.root.appendingPathComponent("Modules/\($0)/module.modulemap").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        for (index, block) in blocks.enumerated() {
            let source = block.lines.joined(separator: "\n")
            let file = work.appendingPathComponent(source.contains("@main") ? "Example\(index).swift" : "main.swift").path
            try source.write(toFile: file, atomically: true, encoding: .utf8)
            var arguments = ["swiftc", "-c", "-swift-version", "6", "-warnings-as-errors", "-module-name", "ReadmeExample\(index)",
                             "-I", TestLAN.binDirectory + "/Modules", "-o", work.appendingPathComponent("example\(index).o").path]
            if source.contains("@main") { arguments.append("-parse-as-library") }
            arguments += moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + [file]
            let compiler = try ToolProcess("/usr/bin/env", arguments, label: "swiftc")
            XCTAssertEqual(compiler.waitForExit(timeout: 120), 0, "README.md line \(block.firstLine): the Swift block does not compile\n" + compiler.transcript)
            try? FileManager.default.removeItem(atPath: file)
        }
    }

    /// Every command of every `sh` block, in order, on LANs named after this run's (so that
    /// `Scripts/lan down` in the README takes down nothing of anyone else's).
    func testEveryShellCommandRuns() throws {
        try TestLAN.require()
        let readme = try Readme()
        let commands = readme.commands
        XCTAssertTrue(commands.contains { $0.hasPrompt }, "README.md has no '$ ' examples in ```sh blocks: has the format changed?")
        let runner = try CommandRunner()
        defer { runner.tearDown() }
        for command in commands {
            runner.run(command)
        }
        runner.stopAll()
        print("ReadmeTests: ran \(runner.ran) commands; not run: \(runner.notRun.isEmpty ? "none" : "")")
        for reason in runner.notRun { print("  - \(reason)") }
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// Runs README commands: tools on the hosts of a LAN of its own, `Scripts/lan` on LANs named
/// after it, and says which commands it cannot run inside a test and why.
final class CommandRunner {
    /// The LAN the README's commands run on (`Scripts/lan` without `--lan` means it too).
    let lan = TestLAN.main + "r"
    let work: URL
    private(set) var ran = 0
    private(set) var notRun: [String] = []
    /// Commands that run until stopped (a publisher, a live browse), stopped before a LAN goes
    /// down and at the end; each must then exit 0.
    private var running: [(Readme.Command, ToolProcess)] = []
    private var lansUsed: Set<String> = []

    init() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("readme-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        lansUsed.insert(lan)
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SVC_LAN_NAME"] = lan
        environment["SVC_DEMO_LAN"] = lan + "demo"
        environment["SVC_BIN_DIR"] = TestLAN.binDirectory
        environment["HOME"] = work.path
        // Keys and pins where the README says they are, ~/.config/svc, in this run's HOME.
        environment["XDG_CONFIG_HOME"] = nil
        return environment
    }

    func run(_ command: Readme.Command) {
        // `a && b`: each part in turn, the second only when the first passed.
        let parts = command.text.components(separatedBy: " && ")
        if parts.count > 1 {
            for part in parts {
                let (text, words) = Readme.split(part)
                let piece = Readme.Command(text: text, words: words, hasPrompt: command.hasPrompt, output: [], line: command.line)
                guard run(single: piece) else { return }
            }
            return
        }
        _ = run(single: command)
    }

    /// Returns whether it passed (or was set aside with its reason).
    private func run(single command: Readme.Command) -> Bool {
        let words = command.words
        let place = "README.md line \(command.line): `\(command.text)`"
        switch (words.first ?? "", words.dropFirst().first ?? "") {
        case ("Scripts/lan", _):
            if words.contains("down") { stopAll() }
            let text = command.text.replacingOccurrences(of: #"--lan ([a-z0-9]+)"#, with: "--lan \(lan)$1", options: .regularExpression)
            if let index = words.firstIndex(of: "--lan"), index + 1 < words.count { lansUsed.insert(lan + words[index + 1]) }
            // A host command on the README's default LAN needs it up (as after its `up`).
            if !words.contains("--lan") && !["up", "down", "status"].contains(where: words.contains) { bringUp() }
            return execute(command, bash: "cd '\(Readme.root.path)' && exec \(text)", tool: Array(words.drop { $0 != "exec" }.dropFirst(2)))
        case ("Scripts/demo", _):
            // Its own LAN (SVC_DEMO_LAN) and the tools this run built (SVC_BIN_DIR).
            return execute(command, bash: "cd '\(Readme.root.path)' && exec \(command.text)", tool: [], timeout: 120)
        case ("swift", "run"):
            // What `swift run` would start, as it would run on a machine of the LAN.
            let (text, rest) = Readme.split(command.text.replacingOccurrences(of: #"^swift run "#, with: "", options: .regularExpression))
            return runTool(Readme.Command(text: text, words: rest, hasPrompt: false, output: [], line: command.line))
        case ("swift", "build"):
            if let index = words.firstIndex(of: "--product"), index + 1 < words.count {
                // Scripts/test built every product before the tests ran (`swift build --build-tests`).
                let built = FileManager.default.isExecutableFile(atPath: TestLAN.binDirectory + "/" + words[index + 1])
                XCTAssertTrue(built, "\(place): \(words[index + 1]) was not built")
                return built
            }
            setAside("\(place): a release build takes most of this machine for minutes; the tests use the debug build of the same sources")
            return true
        case (let program, _) where program.hasPrefix(".build/debug/"):
            let path = TestLAN.binDirectory + "/" + program.dropFirst(".build/debug/".count)
            return execute(command, bash: "cd '\(Readme.root.path)' && exec \(path) \(command.text.dropFirst(program.count))", tool: [])
        case ("svc-publish", _), ("svc-browse", _), ("svc-connect", _), ("svc-doctor", _):
            return runTool(command)
        case ("apt", "install"), ("apt-get", "install"):
            let packages = Array(words.dropFirst(2).filter { !$0.hasPrefix("-") })
            let query = try? ToolProcess("/usr/bin/dpkg-query", ["-W", "-f=${Package} ${Status}\\n"] + packages, label: "dpkg-query")
            _ = query?.waitForExit()
            for package in packages {
                XCTAssertTrue(query?.stdout.contains("\(package) install ok installed") ?? false, "\(place): \(package) is not installed\n" + (query?.transcript ?? ""))
            }
            setAside("\(place): not run (it installs packages); checked that they are installed")
            return true
        case ("Scripts/install-deps", _):
            // Scripts/test ran it before the build: now it finds nothing missing and says nothing.
            return execute(command, bash: "cd '\(Readme.root.path)' && exec \(command.text)", tool: [], timeout: 60)
        case ("Scripts/install", _) where words.contains { $0.hasPrefix("--prefix") }:
            // The tools this run built (SVC_BIN_DIR: no release build), into this run's HOME.
            return execute(command, bash: "cd '\(Readme.root.path)' && exec \(command.text)", tool: [], timeout: 60)
        case ("Scripts/install", _), ("sudo", "Scripts/install"):
            setAside("\(place): not run (it installs into /usr/local); InstallTests installs into a temporary prefix")
            return true
        case ("Scripts/test", _):
            setAside("\(place): this test run is that command")
            return true
        case ("Scripts/stress", _), ("Scripts/bench", _), ("Scripts/fuzz", _):
            setAside("\(place): runs for minutes on LANs of fixed names; run it on its own")
            return true
        default:
            XCTFail("\(place) is a command ReadmeTests does not know how to run; teach it in Tests/EndToEndTests/ReadmeTests.swift")
            return false
        }
    }

    private func setAside(_ reason: String) { notRun.append(reason) }

    private func bringUp() {
        XCTAssertEqual(try TestLAN.control(["up", "2"], lan: lan), 0, "Scripts/lan --lan \(lan) up 2")
    }

    /// A tool example: svc-publish on host a, the others on host b, in a directory of this
    /// run's (also its HOME), with a file for each `--send`.
    private func runTool(_ command: Readme.Command) -> Bool {
        bringUp()
        let words = command.words
        for (index, word) in words.enumerated() where word == "--send" && index + 1 < words.count {
            let created = FileManager.default.createFile(atPath: work.appendingPathComponent(words[index + 1]).path,
                                                         contents: Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
            XCTAssertTrue(created, "could not create \(words[index + 1]) for `\(command.text)`")
        }
        let host = words.first == "svc-publish" ? "a" : "b"
        return execute(command, launcher: [TestLAN.lanScript!, "--lan", lan, "exec", host, "/bin/bash", "-c",
                                           "cd '\(work.path)' && exec \(command.text)"], tool: words)
    }

    private func execute(_ command: Readme.Command, bash: String, tool: [String], timeout: TimeInterval = 30) -> Bool {
        execute(command, launcher: ["/bin/bash", "-c", bash], tool: tool, timeout: timeout)
    }

    /// Starts it; a tool that runs until stopped must show its example's first line (or any
    /// line) and is kept running; anything else must exit 0 within `timeout` and show it.
    private func execute(_ command: Readme.Command, launcher: [String], tool: [String], timeout: TimeInterval = 30) -> Bool {
        ran += 1
        let place = "README.md line \(command.line): `\(command.text)`"
        let process: ToolProcess
        do {
            process = try ToolProcess(launcher[0], Array(launcher.dropFirst()), label: command.text, environment: environment)
        } catch {
            XCTFail("\(place) could not start: \(error)")
            return false
        }
        process.closeStdin()
        let expected = command.output.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        if CommandRunner.runsUntilStopped(tool) {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, process.process.isRunning, !shows(process, expected) { usleep(50_000) }
            guard process.process.isRunning else {
                XCTFail("\(place) ended (status \(process.waitForExit().map(String.init) ?? "?")) instead of running\n" + process.transcript)
                return false
            }
            XCTAssertTrue(shows(process, expected), "\(place) does not print \(expected ?? "anything")\n" + process.transcript)
            running.append((command, process))
            return true
        }
        let status = process.waitForExit(timeout: timeout)
        XCTAssertEqual(status, 0, "\(place) failed\n" + process.transcript)
        if let expected {
            XCTAssertTrue(shows(process, expected), "\(place): nothing like `\(expected)` in its output\n" + process.transcript)
        }
        return status == 0
    }

    /// svc-publish serves until stopped; svc-browse without `--once` or `--timeout` too.
    static func runsUntilStopped(_ tool: [String]) -> Bool {
        // Printing help, the version, a manual page or a completion script ends at once.
        if tool.contains(where: { ["--help", "-h", "--version", "--generate-manual", "--generate-completion-script"].contains($0) }) { return false }
        return switch tool.first {
        case "svc-publish": true
        case "svc-browse": !tool.contains("--once") && !tool.contains("--timeout")
        default: false
        }
    }

    /// Whether the process printed a line like `expected` (any line when nil): for a JSON
    /// example, an object with the same "event" (and "name"); otherwise a line starting with
    /// the same word (after a timestamp, if any) and holding each "quoted" part of the example
    /// (names, TXT, file names).
    func shows(_ process: ToolProcess, _ expected: String?) -> Bool {
        let lines = process.stdout + process.stderr
        guard let expected else { return !lines.isEmpty }
        if let object = try? JSONSerialization.jsonObject(with: Data(expected.utf8)) as? [String: Any] {
            return lines.contains { line in
                guard let actual = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
                return ["event", "name"].allSatisfy { (object[$0] as? String) == (actual[$0] as? String) }
            }
        }
        let first = expected.split(separator: " ").first.map(String.init) ?? ""
        let quoted = expected.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        return lines.contains { line in
            line.split(separator: " ").prefix(3).contains { $0 == first } && quoted.allSatisfy { line.contains($0) }
        }
    }

    /// Sends SIGTERM to whatever still runs; each must exit 0.
    func stopAll() {
        for (command, process) in running {
            process.signal(SIGTERM)
            XCTAssertEqual(process.waitForExit(timeout: 10), 0, "README.md line \(command.line): `\(command.text)` did not exit 0 on SIGTERM\n" + process.transcript)
        }
        running = []
    }

    func tearDown() {
        stopAll()
        for name in lansUsed { _ = try? TestLAN.control(["down"], lan: name) }
        try? FileManager.default.removeItem(at: work)
    }
}
