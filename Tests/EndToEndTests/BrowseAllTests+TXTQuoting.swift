import Foundation
import XCTest

/// svc-browse's text output quotes TXT items as it quotes instance names (review attacks16,
/// finding 6): `"` and `\` in an item are escaped, so an item cannot close its quotes early
/// and pass off the rest as more items or as an `[answering]` mark.
extension BrowseAllTests {
    func testTXTItemsWithQuotesAndBackslashesAreEscapedInTextOutput() throws {
        let name = TestLAN.uniqueName("txtq")
        let publisher = try TestLAN.run("svc-publish", on: "a", ["--name", name, "--txt", #"k=v" "admin=yes"#, "--txt", #"back\slash"#, "--json"])
        XCTAssertNotNil(publisher.waitForEvent { $0["event"] as? String == "registered" }, publisher.transcript)
        let browser = try TestLAN.run("svc-browse", on: "b", ["--resolve"])
        let line = try XCTUnwrap(browser.waitForLine { $0.hasPrefix("added \"\(name)\"") && $0.contains(" txt: ") }, browser.transcript)
        XCTAssertTrue(line.contains(#" "k=v\" \"admin=yes""#), line)
        XCTAssertTrue(line.contains(#" "back\\slash""#), line)
        browser.signal(SIGTERM)
        publisher.signal(SIGTERM)
        XCTAssertEqual(publisher.waitForExit(), 0)
    }
}
