@testable import UnicastDNSSD
import XCTest

final class ConflictPolicyTests: XCTestCase {
    let us = try! DNSName(dotted: "host-a.lab.test")
    let them = try! DNSName(dotted: "host-b.lab.test")

    func testOurLeftoverIsTakenBackUnderEitherPolicy() {
        for policy in ConflictPolicy.allCases {
            XCTAssertEqual(policy.decide(name: "Room", existingTargets: [us], ourHost: us, ourLeftover: true, attempt: 1), .takeBack)
        }
    }

    func testAnotherHostsNameIsNeverTakenBack() {
        XCTAssertEqual(ConflictPolicy.rename.decide(name: "Room", existingTargets: [them], ourHost: us, ourLeftover: true, attempt: 1), .rename("Room (2)"))
        XCTAssertEqual(ConflictPolicy.rename.decide(name: "Room", existingTargets: [], ourHost: us, ourLeftover: true, attempt: 1), .rename("Room (2)"))
        guard case .fail(let error) = ConflictPolicy.fail.decide(name: "Room", existingTargets: [us, them], ourHost: us, ourLeftover: true, attempt: 1) else {
            return XCTFail("fail must fail")
        }
        XCTAssertEqual(error.code, .conflict)
        XCTAssertEqual(error.message, "the name \"Room\" is taken in the zone by another host; choose another --name, or use --conflict rename")
    }

    func testRenamingNumbersAndStopsAfterTheBound() {
        XCTAssertEqual(ConflictPolicy.rename.decide(name: "Room (2)", existingTargets: [them], ourHost: us, ourLeftover: false, attempt: 2), .rename("Room (3)"))
        XCTAssertEqual(ConflictPolicy.numbered("Room (x)", 2), "Room (x) (2)")
        XCTAssertEqual(ConflictPolicy.numbered("(7)", 2), "(7) (2)")
        let long = String(repeating: "é", count: 31)  // 62 bytes
        let renamed = ConflictPolicy.numbered(long, 12)
        XCTAssertLessThanOrEqual(renamed.utf8.count, 63)
        XCTAssertEqual(renamed, String(repeating: "é", count: 29) + " (12)")  // 58 + 5 bytes
        guard case .fail(let error) = ConflictPolicy.rename.decide(name: "Room (20)", existingTargets: [them], ourHost: us, ourLeftover: false,
                                                                  attempt: ConflictPolicy.maximumAttempts) else {
            return XCTFail("rename must stop")
        }
        XCTAssertEqual(error.code, .conflict)
    }
}
