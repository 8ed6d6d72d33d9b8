import CommandLineSupport
import XCTest

/// The manual page says what `--help` says: the same options, no more, in a page that roff
/// reads as meant.
final class ManualPageTests: XCTestCase {
    let page = documentedSpec.manualPage(date: "2026-12-01")

    func testEveryOptionIsInOPTIONSAndNothingElse() {
        let names = taggedOptionNames(manualSection("OPTIONS", in: page))
        XCTAssertEqual(names.sorted(), documentedOptionNames.sorted())
        XCTAssertEqual(names.count, documentedSpec.options.count, "each option once")
        XCTAssertTrue(manualSection("OPTIONS", in: page).contains("\\fB\\-h\\fR, \\fB\\-\\-help\\fR"))
        XCTAssertTrue(manualSection("OPTIONS", in: page).contains("\\fB\\-\\-conflict\\fR \\fIpolicy\\fR"))
    }

    func testSectionsInTheUsualOrder() {
        let titles = page.split(separator: "\n").filter { $0.hasPrefix(".SH ") }.map { String($0.dropFirst(4)) }
        XCTAssertEqual(titles, ["NAME", "SYNOPSIS", "DESCRIPTION", "ARGUMENTS", "OPTIONS", "OUTPUT", "KEYS", "EXIT STATUS",
                                "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"])
        XCTAssertTrue(page.hasPrefix(".TH \"SVC\\-BROWSE\" \"1\" \"2026\\-12\\-01\" \"svc 1.0\" \"User Commands\"\n"), page)
        XCTAssertEqual(manualSection("NAME", in: page), ["svc\\-browse \\- Does things."])
        XCTAssertEqual(manualSection("SEE ALSO", in: page), ["\\fBsvc\\-publish\\fR(1), \\fBsvc\\-connect\\fR(1), \\fBsvc\\-doctor\\fR(8), \\fBavahi\\-daemon\\fR(8), \\fBavahi\\-browse\\fR(1)"])
    }

    func testSynopsisHasTheCommandsOwnOptionsOnly() {
        let synopsis = manualSection("SYNOPSIS", in: page)
        XCTAssertEqual(synopsis.first, "\\fBsvc\\-browse\\fR")
        XCTAssertEqual(synopsis.dropFirst().first, "\\fIname\\fR")
        XCTAssertTrue(synopsis.contains("[\\fB\\-\\-txt\\fR \\fIkey=value\\fR] ..."), "\(synopsis)")
        let standard = Set(CommandSpec.standardOptions.map(\.long))
        XCTAssertEqual(Set(taggedOptionNames([".TP", synopsis.joined(separator: " ")])), documentedOptionNames.subtracting(standard), "\(synopsis)")
    }

    func testDiscussionBecomesDescriptionAndSections() {
        let description = manualSection("DESCRIPTION", in: page)
        XCTAssertEqual(description, ["Does things.", ".PP", "What it does, at some length,", "over two lines."])
        XCTAssertEqual(manualSection("OUTPUT", in: page), [".RS 4", ".nf", "added \"<name>\" <type>", "removed \"<name>\" <type>", ".fi", ".RE"])
        XCTAssertEqual(manualSection("KEYS", in: page), ["As ssh's known_hosts, keys are pinned."])
        XCTAssertEqual(manualSection("EXIT STATUS", in: page), [
            "(the same for all)", ".TP", "\\fB0\\fR", "done", ".TP", "\\fB64\\fR", "bad arguments, a reason that goes on to a second line",
        ])
        XCTAssertEqual(manualSection("FILES", in: page), [".TP", "\\fI~/.config/svc/known_peers\\fR", "The pins."])
        XCTAssertEqual(manualSection("ENVIRONMENT", in: page), [".TP", "\\fIXDG_CONFIG_HOME\\fR", "Where svc/ is."])
    }

    func testTextIsEscapedForRoff() {
        XCTAssertTrue(page.contains("\nAn item; a \\e backslash, [brackets] and 'quotes'.\n"), page)
        XCTAssertTrue(page.contains("\n\\&.json output, a line that starts with a dot.\n"), page)
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            XCTAssertFalse(line.isEmpty, "a blank line is a roff warning")
            XCTAssertFalse(line.hasSuffix(" "), "trailing space: \(line)")
        }
        XCTAssertTrue(page.hasSuffix("\n"))
    }

    func testEachToolsSectionComesFromTheToolList() {
        XCTAssertEqual(documentedSpec.manualSection, 1)
        for reference in CommandSpec.toolPages {
            let spec = CommandSpec(name: reference.name, version: "1", overview: "x", options: [])
            XCTAssertEqual(spec.manualSection, reference.section)
            XCTAssertTrue(spec.manualPage(date: "d").hasPrefix(".TH \"\(reference.name.uppercased().replacing("-", with: "\\-"))\" \"\(reference.section)\""))
        }
    }
}
