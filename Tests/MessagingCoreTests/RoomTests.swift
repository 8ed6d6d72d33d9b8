import MessagingCore
import XCTest

final class LivenessTests: XCTestCase {
    let start = ContinuousClock.now

    func testPingsAQuietPeerThenGivesUp() {
        var liveness = Liveness(now: start, handshakeTimeout: nil, heartbeatInterval: .seconds(15), allowedMisses: 3)
        XCTAssertNil(liveness.tick(at: start + .seconds(14)))
        XCTAssertEqual(liveness.tick(at: start + .seconds(15)), .ping(token: 1))
        XCTAssertNil(liveness.tick(at: start + .seconds(20)))
        XCTAssertEqual(liveness.tick(at: start + .seconds(30)), .ping(token: 2))
        XCTAssertEqual(liveness.tick(at: start + .seconds(45)), .ping(token: 3))
        XCTAssertEqual(liveness.nextDeadline, start + .seconds(60))
        XCTAssertEqual(liveness.tick(at: start + .seconds(60)), .peerSilent)
    }

    func testAnyFrameResetsTheCount() {
        var liveness = Liveness(now: start, handshakeTimeout: nil, heartbeatInterval: .seconds(1), allowedMisses: 1)
        XCTAssertEqual(liveness.tick(at: start + .seconds(1)), .ping(token: 1))
        liveness.heard(at: start + .milliseconds(1500))
        XCTAssertNil(liveness.tick(at: start + .milliseconds(2400)))
        XCTAssertEqual(liveness.tick(at: start + .milliseconds(2500)), .ping(token: 2))
        XCTAssertEqual(liveness.tick(at: start + .milliseconds(3500)), .peerSilent)
    }

    func testHandshakeDeadline() {
        var liveness = Liveness(now: start, handshakeTimeout: .seconds(10), heartbeatInterval: .seconds(15))
        XCTAssertEqual(liveness.nextDeadline, start + .seconds(10))
        XCTAssertEqual(liveness.tick(at: start + .seconds(10)), .handshakeTimedOut)
        var done = Liveness(now: start, handshakeTimeout: .seconds(10), heartbeatInterval: .seconds(15))
        done.handshakeCompleted()
        XCTAssertNil(done.tick(at: start + .seconds(10)))
    }
}

final class RosterTests: XCTestCase {
    func testNamesAreMadeUnique() {
        var roster = Roster()
        XCTAssertEqual(roster.join(id: 1, requested: "bob"), "bob")
        XCTAssertEqual(roster.join(id: 2, requested: "Bob"), "Bob-2")
        XCTAssertEqual(roster.join(id: 3, requested: "bob"), "bob-3")
        XCTAssertEqual(roster.join(id: 4, requested: "server", reserved: ["server"]), "server-2")
        XCTAssertEqual(roster.join(id: 5, requested: String(repeating: "x", count: 32)), String(repeating: "x", count: 32))
        XCTAssertEqual(roster.join(id: 6, requested: String(repeating: "x", count: 32)), String(repeating: "x", count: 30) + "-2")
        XCTAssertEqual(roster.id(named: "BOB-2"), 2)
        XCTAssertEqual(roster.leave(id: 2), "Bob-2")
        XCTAssertNil(roster.leave(id: 2))
        XCTAssertEqual(roster.names, ["bob", "bob-3", "server-2", String(repeating: "x", count: 32), String(repeating: "x", count: 30) + "-2"])
    }

    func testNameRules() {
        XCTAssertNil(Roster.problem(inName: "alice@laptop"))
        XCTAssertNotNil(Roster.problem(inName: ""))
        XCTAssertNotNil(Roster.problem(inName: "two words"))
        XCTAssertNotNil(Roster.problem(inName: "esc\u{1B}"))
        XCTAssertNotNil(Roster.problem(inName: "zero\u{200B}width"))
        XCTAssertNotNil(Roster.problem(inName: "evil\u{202E}gnp"))
        XCTAssertNotNil(Roster.problem(inName: "pаypal")) // Cyrillic а among Latin letters
        XCTAssertNotNil(Roster.problem(inName: String(repeating: "n", count: 10_000)))
    }

    /// Names that would be taken for each other get a suffix, and `/msg` finds a member by
    /// any name that looks like its own: the same comparison both ways.
    func testNamesThatLookAlikeAreMadeUnique() {
        var roster = Roster()
        XCTAssertEqual(roster.join(id: 1, requested: "alice"), "alice")
        XCTAssertEqual(roster.join(id: 2, requested: "Ａlice"), "Ａlice-2")
        XCTAssertEqual(roster.join(id: 3, requested: "ALI\u{301}CE"), "ALI\u{301}CE")
        XCTAssertEqual(roster.join(id: 4, requested: "alíce"), "alíce-2")
        XCTAssertEqual(roster.join(id: 5, requested: "асе"), "асе") // Cyrillic
        XCTAssertEqual(roster.join(id: 6, requested: "ace"), "ace-2")
        XCTAssertEqual(roster.join(id: 7, requested: "0scar"), "0scar")
        XCTAssertEqual(roster.join(id: 8, requested: "Oscar"), "Oscar-2")
        XCTAssertEqual(roster.join(id: 9, requested: "Living-Room", reserved: ["living-room"]), "Living-Room-2")
        XCTAssertEqual(roster.id(named: "ALICE"), 1)
        XCTAssertEqual(roster.id(named: "ａｌｉｃｅ-2"), 2)
        XCTAssertEqual(roster.id(named: "alíce"), 3)
        XCTAssertEqual(roster.id(named: "АСЕ"), 5)
        XCTAssertNil(roster.id(named: "alicia"))
        XCTAssertEqual(roster.id(named: "ａｌｉ\u{301}ｃｅ"), 3)
        XCTAssertNil(roster.id(named: String(repeating: "ａ", count: 1000)), "an over-long address matches nobody")
        roster.leave(id: 1)
        XCTAssertEqual(roster.join(id: 10, requested: "ALICE"), "ALICE")
    }

    /// Finding F5: whole-script and IPA look-alikes share no room with the Latin name.
    func testLookAlikesOfOtherScriptsGetASuffix() {
        var roster = Roster()
        XCTAssertEqual(roster.join(id: 1, requested: "BOB"), "BOB")
        XCTAssertEqual(roster.join(id: 2, requested: "ꓐꓳꓐ"), "ꓐꓳꓐ-2") // Lisu
        XCTAssertEqual(roster.join(id: 3, requested: "ADAM"), "ADAM")
        XCTAssertEqual(roster.join(id: 4, requested: "ᎪᎠᎪᎷ"), "ᎪᎠᎪᎷ-2") // Cherokee
        XCTAssertEqual(roster.join(id: 5, requested: "alice"), "alice")
        XCTAssertEqual(roster.join(id: 6, requested: "ɑlice"), "ɑlice-2") // IPA alpha
        XCTAssertEqual(roster.join(id: 7, requested: "greg"), "greg")
        XCTAssertEqual(roster.join(id: 8, requested: "ɡreɡ"), "ɡreɡ-2") // script g
        XCTAssertEqual(roster.join(id: 9, requested: "mike"), "mike")
        XCTAssertEqual(roster.join(id: 10, requested: "mi\u{307}ke"), "mi\u{307}ke-2") // dot above on i
        XCTAssertEqual(roster.join(id: 11, requested: "john"), "john")
        XCTAssertEqual(roster.join(id: 12, requested: "յօհո"), "յօհո-2") // Armenian
        XCTAssertEqual(roster.id(named: "ꓐꓳꓐ"), 1)
        for name in ["jօhn", "ᎪDᎪM", "b०b", "carol\u{2800}->\u{2800}dave"] {
            XCTAssertNotNil(Roster.problem(inName: name), name)
        }
    }
}

final class RoomCommandTests: XCTestCase {
    func testParsesCommands() throws {
        XCTAssertEqual(try RoomCommand(parsing: "hello all", peerInSend: false), .say("hello all"))
        XCTAssertEqual(try RoomCommand(parsing: "//not a command", peerInSend: false), .say("/not a command"))
        XCTAssertEqual(try RoomCommand(parsing: "/msg bob hi there", peerInSend: false), .message(to: "bob", text: "hi there"))
        XCTAssertEqual(try RoomCommand(parsing: "/who", peerInSend: false), .who)
        XCTAssertEqual(try RoomCommand(parsing: "/send /tmp/a.bin", peerInSend: false), .send(to: nil, path: "/tmp/a.bin"))
        XCTAssertEqual(try RoomCommand(parsing: "/send bob /tmp/a file.bin", peerInSend: true), .send(to: "bob", path: "/tmp/a file.bin"))
        XCTAssertEqual(try RoomCommand(parsing: "/quit", peerInSend: false), .quit)
        // A member's /send: one argument is a path (to the publisher), two a member and a path.
        XCTAssertEqual(try RoomCommand(parsing: "/send bob /tmp/a file.bin", peerInSend: false), .send(to: "bob", path: "/tmp/a file.bin"))
        XCTAssertEqual(try RoomCommand(parsing: "/send \"/tmp/a file.bin\"", peerInSend: false), .send(to: nil, path: "/tmp/a file.bin"))
    }

    func testNamesWithSpacesGoInDoubleQuotes() throws {
        XCTAssertEqual(try RoomCommand(parsing: "/msg \"Living room\" hi there", peerInSend: false), .message(to: "Living room", text: "hi there"))
        XCTAssertEqual(try RoomCommand(parsing: "/msg   \"Living room\"   hi", peerInSend: true), .message(to: "Living room", text: "hi"))
        XCTAssertEqual(try RoomCommand(parsing: "/send \"Living room\" ~/a b.txt", peerInSend: false), .send(to: "Living room", path: "~/a b.txt"))
        XCTAssertEqual(try RoomCommand(parsing: "/send \"Living room\" \"a \\\"b\\\".txt\"", peerInSend: true),
                       .send(to: "Living room", path: "a \"b\".txt"))
        XCTAssertEqual(try RoomCommand(parsing: #"/msg "say \"hi\" \\ bye" x"#, peerInSend: false), .message(to: #"say "hi" \ bye"#, text: "x"))
        // A backslash before anything else is itself; a quote inside a word is a character.
        XCTAssertEqual(try RoomCommand(parsing: #"/msg "a\b" x"#, peerInSend: false), .message(to: #"a\b"#, text: "x"))
        XCTAssertEqual(try RoomCommand(parsing: #"/msg o"brien x"#, peerInSend: false), .message(to: #"o"brien"#, text: "x"))
        // The text after the name is taken as typed, quotes and all.
        XCTAssertEqual(try RoomCommand(parsing: #"/msg bob "quoted" text"#, peerInSend: false), .message(to: "bob", text: #""quoted" text"#))
    }

    func testQuotingMistakesAreExplained() {
        let cases = [
            (#"/msg "Living room hi"#, "is not closed"),
            (#"/msg "" hi"#, "cannot be empty"),
            (#"/msg "Living room"hi"#, "must be followed by a space"),
            (#"/send bob "a b" c"#, "must end the line"),
            (#"/msg "Living room""#, "/msg needs a name and a text"),
        ]
        for (line, problem) in cases {
            XCTAssertThrowsError(try RoomCommand(parsing: line, peerInSend: false), line) { error in
                let message = (error as! ProtocolError).message
                XCTAssertTrue(message.contains(problem) && message.contains("double quotes"), message)
            }
        }
    }

    func testMistakesExplainTheCommandsOfThatTool() {
        for line in ["/msg bob", "/who me", "/send", "/dance", "/send /only-a-path", "/quit now"] {
            let publisher = line.contains("only")
            XCTAssertThrowsError(try RoomCommand(parsing: line, peerInSend: publisher), line) { error in
                let message = (error as! ProtocolError).message
                XCTAssertTrue(message.contains("/msg <name> <text>"), message)
                XCTAssertEqual(message.contains("/send <path> (a file to the publisher)"), !publisher, message)
            }
        }
    }

    func testAHomePathIsExpandedInSendOnly() {
        XCTAssertEqual(RoomCommand.send(to: "bob", path: "~/a.txt").expandingHome("/home/me"), .send(to: "bob", path: "/home/me/a.txt"))
        XCTAssertEqual(RoomCommand.send(to: nil, path: "~").expandingHome("/home/me/"), .send(to: nil, path: "/home/me"))
        XCTAssertEqual(RoomCommand.send(to: nil, path: "~bob/a.txt").expandingHome("/home/me"), .send(to: nil, path: "~bob/a.txt"))
        XCTAssertEqual(RoomCommand.send(to: nil, path: "a/~/b").expandingHome("/home/me"), .send(to: nil, path: "a/~/b"))
        XCTAssertEqual(RoomCommand.send(to: nil, path: "~/a").expandingHome(nil), .send(to: nil, path: "~/a"))
        XCTAssertEqual(RoomCommand.say("~/a").expandingHome("/home/me"), .say("~/a"))
    }
}

final class InboxNameTests: XCTestCase {
    func testOfferedNamesCannotLeaveTheInbox() {
        XCTAssertEqual(InboxName.sanitized("../../etc/passwd"), "passwd")
        XCTAssertEqual(InboxName.sanitized("/etc/passwd"), "passwd")
        XCTAssertEqual(InboxName.sanitized("a/b"), "b")
        XCTAssertEqual(InboxName.sanitized("."), "file")
        XCTAssertEqual(InboxName.sanitized(".."), "file")
        XCTAssertEqual(InboxName.sanitized(""), "file")
        XCTAssertEqual(InboxName.sanitized(".hidden"), "hidden")
        XCTAssertEqual(InboxName.sanitized("new\nline\u{0}nul"), "new_line_nul")
        XCTAssertEqual(InboxName.sanitized("back\\slash"), "back_slash")
        XCTAssertEqual(InboxName.sanitized(String(repeating: "é", count: 200)).utf8.count, 254)
    }

    /// Finding F9: nothing that reorders or hides characters, reads as an option, or looks
    /// empty reaches the disk.
    func testOfferedNamesCannotHideOrPassForOptions() {
        XCTAssertEqual(InboxName.sanitized("invoice\u{202E}fdp.exe"), "invoice_fdp.exe")
        XCTAssertEqual(InboxName.sanitized("report\u{200B}.pdf"), "report_.pdf")
        XCTAssertEqual(InboxName.sanitized("a\u{FEFF}b\u{2066}c\u{AD}d\u{2800}e\u{3164}f\u{85}g"), "a_b_c_d_e_f_g")
        XCTAssertEqual(InboxName.sanitized("-rf"), "_-rf")
        XCTAssertEqual(InboxName.sanitized("--checkpoint-action=exec=sh x.sh"), "_--checkpoint-action=exec=sh x.sh")
        XCTAssertEqual(InboxName.sanitized("dir/-n"), "_-n")
        XCTAssertEqual(InboxName.sanitized(" . -x"), "_-x", "dots and spaces go first, then the dash is guarded")
        XCTAssertEqual(InboxName.sanitized("a-b"), "a-b")
        XCTAssertEqual(InboxName.sanitized("   "), "file")
        XCTAssertEqual(InboxName.sanitized("\u{3000}\u{A0} "), "file")
        XCTAssertEqual(InboxName.sanitized("  two words.txt  "), "two words.txt")
        XCTAssertEqual(InboxName.sanitized(" .bashrc"), "bashrc")
        XCTAssertEqual(InboxName.sanitized("打印机 #1 👩\u{200D}💻.png"), "打印机 #1 👩_💻.png", "a joiner is invisible, even in an emoji")
        let long = InboxName.sanitized("-" + String(repeating: "x", count: 300))
        XCTAssertEqual(long.utf8.count, InboxName.maximumBytes)
        XCTAssertTrue(long.hasPrefix("_-"))
        XCTAssertEqual(InboxName.sanitized(String(repeating: "x", count: 254) + " y"), String(repeating: "x", count: 254),
                       "a space left at the end by the cut is trimmed")
        let hostile = (0x0...0x3000).compactMap(Unicode.Scalar.init).map(String.init).joined()
        let stored = InboxName.sanitized(hostile)
        XCTAssertFalse(stored.unicodeScalars.contains { UnsafeText.isEscapedOnTerminal($0) || UnsafeText.isInvisible($0) || $0 == "\\" })
    }

    func testDuplicatesGetASuffix() {
        let existing: Set = ["a.txt", "a (2).txt", "noext"]
        XCTAssertEqual(InboxName.unique("b.txt", exists: existing.contains), "b.txt")
        XCTAssertEqual(InboxName.unique("a.txt", exists: existing.contains), "a (3).txt")
        XCTAssertEqual(InboxName.unique("noext", exists: existing.contains), "noext (2)")
    }

    func testASlashInsideAGraphemeIsStillASeparator() {
        // U+0601 is a prepended mark: "\u{0601}/" is one Character, so a split by Character
        // kept the "/" (found by the room fuzz target).
        XCTAssertEqual(InboxName.sanitized("\u{0601}/s"), "s")
        XCTAssertEqual(InboxName.sanitized("\u{0600}/../\u{0605}/../etc/passwd"), "passwd")
        XCTAssertFalse(InboxName.sanitized("a\u{0602}/b").contains("/"))
    }

    func testVariantsOfNamesWithLongExtensionsStayWithinTheLimitAndEnd() {
        // An extension of 252 bytes or more left no room for the stem: cutting went on forever.
        for extensionLength in [200, 249, 250, 251, 252, 253, 254] {
            let name = "a." + String(repeating: "x", count: extensionLength)
            let second = InboxName.variant(name, number: 2)
            XCTAssertLessThanOrEqual(second.utf8.count, 255, "\(extensionLength)")
            XCTAssertTrue(second.contains(" (2)"), "\(extensionLength)")
            XCTAssertNotEqual(second, InboxName.variant(name, number: 3))
        }
        XCTAssertEqual(InboxName.variant("a.txt", number: 1), "a.txt")
        XCTAssertEqual(InboxName.variant("a.txt", number: 12), "a (12).txt")
        XCTAssertEqual(InboxName.variant(String(repeating: "é", count: 127), number: 2).utf8.count, 254, "cut at a character")
    }
}
