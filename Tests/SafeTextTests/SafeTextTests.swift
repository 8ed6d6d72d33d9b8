import SafeText
import XCTest

final class TerminalSafeTests: XCTestCase {
    func testEscapesControlsAndBidiButKeepsText() {
        XCTAssertEqual(TerminalSafe.escape("\u{1B}[31mred\u{7}"), "\\u{1B}[31mred\\u{7}")
        XCTAssertEqual(TerminalSafe.escape("a\u{9B}b\u{7F}"), "a\\u{9B}b\\u{7F}")
        XCTAssertEqual(TerminalSafe.escape("abc\u{202E}def\u{61C}\u{2067}"), "abc\\u{202E}def\\u{61C}\\u{2067}")
        XCTAssertEqual(TerminalSafe.escape("line\nbreak\r\u{2028}\u{2029}"), "line\\u{A}break\\u{D}\\u{2028}\\u{2029}")
        XCTAssertEqual(TerminalSafe.escape("a.b\\c 打印机 #1 👩‍💻"), "a.b\\c 打印机 #1 👩‍💻")
        XCTAssertEqual(TerminalSafe.escape(bytes: [0x61, 0xFF, 0x1B]), "a\u{FFFD}\\u{1B}")
    }

    func testEscapingTwiceChangesNothing() {
        let hostile = "\u{1B}]0;title\u{7}\u{9B}2J\u{202E}txt.exe\u{2066}\r\n\t\\u{1B}"
        let once = TerminalSafe.escape(hostile)
        XCTAssertEqual(TerminalSafe.escape(once), once)
        XCTAssertFalse(once.unicodeScalars.contains(where: TerminalSafe.isEscaped))
    }

    /// A tab is shown as a tab; every other C0 and C1 control, DEL, and the separators and
    /// bidirectional controls are still escaped.
    func testTabsArePrintedAsTabsAndEveryOtherControlIsEscaped() {
        XCTAssertEqual(TerminalSafe.escape("name\tsize\t\u{1B}[2J"), "name\tsize\t\\u{1B}[2J")
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), UnsafeText.isEscapedOnTerminal(scalar) else { continue }
            let expected = scalar == "\t" ? "\t" : "\\u{" + String(value, radix: 16, uppercase: true) + "}"
            XCTAssertEqual(TerminalSafe.escape("a\(scalar)b"), "a\(expected)b", UnsafeText.codePoint(scalar))
        }
        XCTAssertTrue(UnsafeText.isEscapedOnTerminal("\t"), "a tab is still refused in names and file names")
    }

    /// Printable ASCII, which `isEscapedOnTerminal` lets through without asking Unicode's
    /// tables, has none of the properties it escapes; the controls around it are escaped.
    func testPrintableASCIIHasNoneOfTheEscapedProperties() {
        for value in UInt8(0x20)...0x7E {
            let properties = Unicode.Scalar(value).properties
            let code = UnsafeText.codePoint(Unicode.Scalar(value))
            XCTAssertFalse([.control, .lineSeparator, .paragraphSeparator].contains(properties.generalCategory), code)
            XCTAssertFalse(properties.isBidiControl, code)
            XCTAssertFalse(UnsafeText.isEscapedOnTerminal(Unicode.Scalar(value)), code)
        }
        XCTAssertTrue(UnsafeText.isEscapedOnTerminal("\u{1F}"))
        XCTAssertTrue(UnsafeText.isEscapedOnTerminal("\u{7F}"))
    }

    /// The two rules cannot disagree: whatever a terminal must not see, a name may not hold,
    /// and a name of any one accepted character prints as it is.
    func testEveryCharacterEscapedOnATerminalIsRefusedInNames() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            if UnsafeText.isEscapedOnTerminal(scalar) {
                XCTAssertNotNil(UnsafeText.problem(inNameCharacter: scalar), UnsafeText.codePoint(scalar))
            }
            if UnsafeText.problem(inNameCharacter: scalar) == nil {
                XCTAssertEqual(TerminalSafe.escape(String(scalar)), String(scalar), UnsafeText.codePoint(scalar))
            }
        }
    }
}

final class MemberNameTests: XCTestCase {
    func testPlainNamesInManyScriptsAreAccepted() {
        for name in ["alice", "alice@laptop", "bob_2", "Ａlice", "José", "jose\u{301}", "Straße", "ngọc", "Дмитрий",
                     "Ωμέγα", "王小明", "محمد", "ﬁsh", "x", String(repeating: "n", count: 32)] {
            XCTAssertNil(MemberName.problem(in: name), name)
        }
    }

    func testInvisibleBidiAndControlCharactersAreRefused() {
        let refused: [(String, String)] = [
            ("", "1 to 32 bytes"), (String(repeating: "n", count: 33), "not 33"), ("two words", "space"),
            ("no\u{A0}break", "space"), ("esc\u{1B}", "control"), ("c1\u{85}", "control"),
            ("zero\u{200B}width", "invisible"), ("join\u{200D}er", "invisible"), ("soft\u{AD}hyphen", "invisible"),
            ("evil\u{202E}gnp", "bidirectional"), ("mark\u{200E}", "bidirectional"), ("iso\u{2066}late", "bidirectional"),
            ("line\u{2028}sep", "control"), ("para\u{2029}", "control"), ("bom\u{FEFF}", "invisible"),
            ("vs\u{FE0F}", "invisible"), ("\u{3164}filler", "invisible"), ("cgj\u{34F}", "invisible"),
            ("tag\u{E0041}", "invisible"), ("private\u{E000}", "private-use"), ("new\u{378}", "unassigned"),
            ("non\u{FFFE}", "noncharacter"), ("\u{301}accent", "start with a combining mark"),
            ("zalgo" + "\u{300}\u{301}\u{302}\u{303}", "more than 3 combining marks"),
            ("ℌello", "compatibility form"), ("x²", "compatibility form"), ("ｱｲｳ", "compatibility form"),
            ("𝐚lice", "compatibility form"), ("Ⅻ", "compatibility form"),
            ("pаypal", "Latin and Cyrillic"), ("αlpha", "Latin and Greek"), ("ΑБ", "Greek and Cyrillic"),
        ]
        for (name, reason) in refused {
            let problem = MemberName.problem(in: name)
            XCTAssertTrue(problem?.contains(reason) == true, "\(name.unicodeScalars.map(UnsafeText.codePoint)): \(problem ?? "accepted")")
        }
    }

    func testNamesThatLookAlikeAreTheSame() {
        let groups: [[String]] = [
            ["alice", "ALICE", "Alice", "Ａlice", "ａｌｉｃｅ", "AL1CE", "aIice"],
            ["alíce", "ali\u{301}ce", "ALÍCE", "ALI\u{301}CE"],
            ["ace", "асе", "АСЕ"],       // Latin; Cyrillic small and capital letters
            ["oscar", "0scar", "Οscar"], // digit zero, Greek capital omicron
            ["taxi", "ΤΑΧΙ"],            // Greek capitals
            ["mary", "rnary"], ["wes", "vves"], ["a-b", "a‐b", "a–b", "a−b"],
            ["strasse", "STRASSE", "Straße"], ["ёж", "ëж"],
        ]
        for group in groups {
            for name in group {
                XCTAssertEqual(MemberName.comparisonKey(name), MemberName.comparisonKey(group[0]), "\(name) vs \(group[0])")
            }
        }
        let long = String(repeating: "a", count: MemberName.maximumLookupBytes + 1)
        for (a, b) in [("alice", "alicia"), ("bob", "вов"), ("ana", "anna"), ("é", "e"), ("王", "玉"), (long, long)] {
            XCTAssertFalse(MemberName.same(a, b), "\(a) vs \(b)")
        }
    }

    /// Finding F5: a name that renders like another member's, by letters of another script, IPA
    /// letters, a foreign zero, a dot on an i, or a blank that is not whitespace.
    func testLettersAndDigitsOfOneScriptOnly() {
        let refused: [(String, String)] = [
            ("ᎪDᎪM", "Latin and Cherokee"), ("jօhn", "Latin and Armenian"), ("b०b", "Latin and Devanagari"),
            ("ꓐOB", "Latin and Lisu"), ("bob٠", "Latin and Arabic"), ("שalom", "Latin and Hebrew"),
            ("ᐯictor", "Latin and Canadian Syllabics"), ("ⲟscar", "Latin and Coptic"), ("ทom", "Latin and Thai"),
            ("Ꭺдам", "Cyrillic and Cherokee"), ("राम১", "Devanagari and Bengali"), ("ꓐ的", "Han, Kana or Hangul and Lisu"),
        ]
        for (name, reason) in refused {
            let problem = MemberName.problem(in: name)
            XCTAssertTrue(problem?.contains(reason) == true, "\(name): \(problem ?? "accepted")")
            XCTAssertTrue(problem?.contains("write it in one script") == true, "\(name): \(problem ?? "accepted")")
        }
        for name in ["Bob的电脑", "田中さん", "김철수", "ꓐꓳꓐ", "ᎪᎠᎪᎷ", "ꭺꭰꭺꮇ", "१२३", "राम१", "محمد٢", "ɑlice", "ɡreɡ",
                     "mi\u{307}ke", "αβγ1", "Ωμέγα-2", "յօհն"] {
            XCTAssertNil(MemberName.problem(in: name), name)
        }
    }

    func testBlankLookingCharactersAreRefused() {
        for name in ["carol\u{2800}->\u{2800}dave", "\u{2800}", "x\u{3164}", "x\u{FFA0}", "x\u{115F}", "x\u{1160}",
                     "x\u{1D159}", "x\u{16FE4}"] {
            let problem = MemberName.problem(in: name)
            XCTAssertTrue(problem?.contains("invisible or blank") == true, "\(name.unicodeScalars.map(UnsafeText.codePoint)): \(problem ?? "accepted")")
        }
        XCTAssertTrue(UnsafeText.isInvisible("\u{2800}"))
        XCTAssertTrue(UnsafeText.isInvisible("\u{200B}"))
        XCTAssertFalse(UnsafeText.isInvisible("a"))
        XCTAssertFalse(UnsafeText.isInvisible(" "), "a space is visible as a gap; names refuse it as whitespace")
    }

    /// A whole-script look-alike is valid on its own and caught only by the key; the mixed
    /// ones are refused above and would be caught by the key too.
    func testLookAlikesOfOtherScriptsAreTheSame() {
        let groups: [[String]] = [
            ["bob", "BOB", "ꓐꓳꓐ", "ꓐOB", "b०b", "b০b", "b๐b", "Bob"],   // Lisu, Devanagari, Bengali, Thai zero
            ["john", "jօhn", "յօհո", "JOHN"],                             // Armenian
            ["adam", "ᎪDᎪM", "ᎪᎠᎪᎷ", "ꭺꭰꭺꮇ"],                            // Cherokee capitals and small letters
            ["alice", "ɑlice", "ᴀlice", "Ɑlice", "ꓮꓡꓲꓚꓰ"],               // IPA alpha and its capital, small capital, Lisu
            ["greg", "ɡreɡ", "ɢʀᴇɢ", "Ɡreg"],                            // script g, small capitals, capital script g
            ["mike", "mi\u{307}ke", "MİKE", "mɩke", "mɪke", "mıke"],     // dot above on i, Turkish İ, IPA iota, small capital I
            ["jim", "j\u{307}im", "ȷim"],                                 // dot above on j, dotless j
            ["victor", "ᐯictor"], ["oscar", "ⲟscar", "Ⲟscar"],            // Canadian Syllabics, Coptic
            ["yes", "ʏes"], ["hat", "ʜat", "հat"],
        ]
        for group in groups {
            for name in group {
                XCTAssertEqual(MemberName.comparisonKey(name), MemberName.comparisonKey(group[0]), "\(name) vs \(group[0])")
            }
        }
        for (a, b) in [("mike", "mïke"), ("bob", "b٠b"), ("adam", "ᎠᎠᎠᎠ"), ("john", "jon"), ("l\u{307}", "l\u{308}")] {
            XCTAssertFalse(MemberName.same(a, b), "\(a) vs \(b)")
        }
    }
}
