import TransportCore
import XCTest

final class CountedTests: XCTestCase {
    func testOneIsSingularEverythingElsePlural() {
        XCTAssertEqual(counted(1, "file"), "1 file")
        XCTAssertEqual(counted(2, "file"), "2 files")
        XCTAssertEqual(counted(0, "file"), "0 files")
        XCTAssertEqual(counted(-1, "degree"), "-1 degrees")
    }

    func testIrregularPluralsAndPhrases() {
        XCTAssertEqual(counted(1, "address", "addresses"), "1 address")
        XCTAssertEqual(counted(3, "address", "addresses"), "3 addresses")
        XCTAssertEqual(counted(1, "line was", "lines were"), "1 line was")
        XCTAssertEqual(counted(12, "line was", "lines were"), "12 lines were")
    }
}
