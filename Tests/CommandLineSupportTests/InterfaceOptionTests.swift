import CommandLineSupport
import DiscoveryCore
import XCTest

final class InterfaceOptionTests: XCTestCase {
    let spec = CommandSpec(name: "tool", version: "1.0", overview: "Does things.", options: [.interface])

    func interface(_ arguments: [String]) throws(UsageError) -> NetworkInterface? {
        guard case .run(let parsed) = try ParsedCommandLine.parse(arguments, spec: spec) else { throw UsageError("expected a run") }
        return try parsed.networkInterface()
    }

    func testNoOptionMeansEveryInterface() throws {
        XCTAssertNil(try interface([]))
    }

    func testLoopbackIsFoundByName() throws {
        let loopback = try XCTUnwrap(try interface(["--interface", "lo"]))
        XCTAssertEqual(loopback.name, "lo")
        XCTAssertNotEqual(loopback.index, 0)
    }

    func testAnUnknownNameIsAUsageErrorListingTheInterfaces() {
        for name in ["no-such-if0", "", "x\u{1B}[2J", String(repeating: "a", count: 40)] {
            XCTAssertThrowsError(try interface(["--interface", name])) { error in
                let message = (error as? UsageError)?.message ?? ""
                XCTAssertTrue(message.hasPrefix("no network interface is named '\(name)'; this host has: "), message)
                XCTAssertTrue(message.contains("lo"), message)
            }
        }
    }

    func testHelpDescribesTheOption() {
        XCTAssertTrue(spec.helpText.contains("  --interface <name>      Use only this network interface, e.g. eth0"), spec.helpText)
    }
}
