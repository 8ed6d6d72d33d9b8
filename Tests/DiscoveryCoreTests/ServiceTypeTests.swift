import DiscoveryCore
import XCTest

final class ServiceTypeTests: XCTestCase {
    func testParsesValidTypes() throws {
        let type = try ServiceType("_p2pipp._tcp")
        XCTAssertEqual(type.name, "p2pipp")
        XCTAssertEqual(type.transport, .tcp)
        XCTAssertEqual(type.description, "_p2pipp._tcp")
        XCTAssertEqual(try ServiceType("_http._udp.").baseType, "_http._udp")
        XCTAssertEqual(try ServiceType("_a-b-c9._TCP").transport, .tcp)
        XCTAssertEqual(try ServiceType("_abcdefghijklmno._tcp").name.count, 15)
    }

    func testParsesSubtypes() throws {
        let type = try ServiceType("_http._tcp,_printer,_color")
        XCTAssertEqual(type.subtypes, ["_printer", "_color"])
        XCTAssertEqual(type.baseType, "_http._tcp")
        XCTAssertEqual(type.description, "_http._tcp,_printer,_color")
    }

    func testRejectsInvalidTypesWithAReason() {
        let cases: [(String, String)] = [
            ("p2pipp", "two labels"),
            ("p2pipp._tcp", "two labels"),
            ("_p2pipp._sctp", "_tcp or _udp"),
            ("_abcdefghijklmnop._tcp", "1 to 15"),
            ("_._tcp", "1 to 15"),
            ("_123._tcp", "at least one letter"),
            ("_-abc._tcp", "start or end with a hyphen"),
            ("_abc-._tcp", "start or end with a hyphen"),
            ("_a--b._tcp", "two hyphens"),
            ("_a_b._tcp", "letters, digits and hyphens"),
            ("_a.b._tcp", "two labels"),
            ("_http._tcp,printer", "subtype"),
            ("_http._tcp,_", "subtype"),
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try ServiceType(text), text) { error in
                let error = error as! DiscoveryError
                XCTAssertEqual(error.code, .invalidServiceType)
                XCTAssertTrue(error.message.contains(reason), "\(text): \(error.message)")
                XCTAssertTrue(error.message.contains("_p2pipp._tcp"), "the message shows a valid example")
            }
        }
    }
}

final class InstanceNameTests: XCTestCase {
    func testAcceptsAnyPrintableUnicodeUpTo63Bytes() throws {
        for name in ["a", "打印机 #1", "a.b\\c", "with space.and.dots", String(repeating: "x", count: 63),
                     String(repeating: "é", count: 31) /* 62 bytes */] {
            XCTAssertEqual(try InstanceName(name).value, name)
        }
    }

    func testRejectsEmptyLongAndControlCharacters() {
        for name in ["", String(repeating: "x", count: 64), String(repeating: "打", count: 22) /* 66 bytes */] {
            XCTAssertThrowsError(try InstanceName(name)) { error in
                XCTAssertTrue((error as! DiscoveryError).message.contains("1 to 63 bytes"))
            }
        }
        XCTAssertThrowsError(try InstanceName("evil\u{1B}[31m")) { error in
            XCTAssertEqual((error as! DiscoveryError).code, .invalidInstanceName)
            XCTAssertTrue((error as! DiscoveryError).message.contains("U+001B"))
        }
        XCTAssertThrowsError(try InstanceName("tab\there"))
    }

    func testAlternativeNamesCountUpAndStayWithin63Bytes() throws {
        XCTAssertEqual(try InstanceName("printer").alternative.value, "printer #2")
        XCTAssertEqual(try InstanceName("printer #2").alternative.value, "printer #3")
        XCTAssertEqual(try InstanceName("printer #9").alternative.alternative.value, "printer #11")
        XCTAssertEqual(try InstanceName("#2").alternative.value, "#2 #2", "a bare '#2' has no base to count on")
        XCTAssertEqual(try InstanceName("a#2").alternative.value, "a#2 #2")
        let long = try InstanceName(String(repeating: "打", count: 21)) // 63 bytes
        let next = long.alternative
        XCTAssertEqual(next.value, String(repeating: "打", count: 20) + " #2", "whole characters are dropped")
        XCTAssertLessThanOrEqual(next.value.utf8.count, 63)
    }
}

final class ServiceDomainTests: XCTestCase {
    func testNormalisesToATrailingDot() throws {
        XCTAssertEqual(try ServiceDomain("local").name, "local.")
        XCTAssertEqual(try ServiceDomain("LOCAL.").name, "local.")
        XCTAssertEqual(try ServiceDomain("example.com").name, "example.com.")
        XCTAssertEqual(ServiceDomain(reported: "local").name, "local.")
    }

    func testRejectsBadDomains() {
        for text in ["", ".", "a..b", "has space", String(repeating: "a", count: 64) + ".com"] {
            XCTAssertThrowsError(try ServiceDomain(text), text) { error in
                XCTAssertEqual((error as! DiscoveryError).code, .invalidDomain)
            }
        }
    }
}
