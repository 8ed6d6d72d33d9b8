import DiscoveryCore
import PeerTrust
import XCTest

final class ServiceNameTests: XCTestCase {
    func instance(_ name: String) -> ServiceInstance { ServiceInstance(name: name, type: .p2pipp, domain: .local) }

    func testPresentationFormOfTheDesign() {
        XCTAssertEqual(ServiceName(instance("Living room")).presentation, #"Living\032room._p2pipp._tcp.local."#)
    }

    func testEscapes() {
        let cases: [(String, String)] = [
            ("a.b", #"a\.b"#),
            (#"back\slash"#, #"back\\slash"#),
            ("tab\there", #"tab\009here"#),
            ("nul\u{0}", #"nul\000"#),
            ("del\u{7F}", #"del\127"#),
            ("bang!", "bang!"),
            ("Küche 打印机 🎉", #"Küche\032打印机\032🎉"#),
            ("\u{1B}[31m", #"\027[31m"#),
            ("a#b", "a#b"),
        ]
        for (name, escaped) in cases {
            XCTAssertEqual(ServiceName.escaped(name), escaped, name)
            let full = ServiceName(instance(name))
            XCTAssertEqual(full.presentation, escaped + "._p2pipp._tcp.local.")
            XCTAssertEqual(ServiceName(presentation: full.presentation), full, "round trip of \(escaped)")
        }
    }

    func testALeadingHashIsEscapedSoTheLineIsNoComment() throws {
        let name = ServiceName(instance("#1 room"))
        XCTAssertEqual(name.presentation, #"\0351\032room._p2pipp._tcp.local."#)
        XCTAssertEqual(ServiceName(presentation: name.presentation)?.instanceName, "#1 room")
        XCTAssertEqual(try XCTUnwrap(ServiceName(presentation: "\\#1._p2pipp._tcp.local.")).instanceName, "#1")
    }

    func testRoundTripOfEveryByteAndRandomNames() {
        // Every byte that can stand alone in UTF-8, one name each.
        for value in 0..<0x80 {
            let name = "x" + String(UnicodeScalar(UInt8(value))) + "y"
            let full = ServiceName(instance(name))
            XCTAssertEqual(ServiceName(presentation: full.presentation)?.instanceName, name, "byte \(value)")
            XCTAssertFalse(full.presentation.utf8.contains { $0 < 0x21 || $0 == 0x7F }, "byte \(value) is escaped")
        }
        let alphabet = Array(" .\\\t\n\"'#@abcXYZ09éß中🎉\u{7F}\u{1}")
        for _ in 0..<300 {
            let name = String((0..<Int.random(in: 1...15)).map { _ in alphabet.randomElement()! })
            let full = ServiceName(instance(name))
            XCTAssertEqual(ServiceName(presentation: full.presentation)?.instanceName, name)
        }
    }

    func testUnescapedSpellingsAreTheSameName() throws {
        let spelled = try XCTUnwrap(ServiceName(presentation: #"\076iving\ room._P2PIPP._tcp.LOCAL"#))
        XCTAssertEqual(spelled.instanceName, "Living room")
        XCTAssertTrue(spelled.isSame(as: ServiceName(instance("living room"))), "ASCII case is ignored, as DNS does")
        XCTAssertFalse(spelled.isSame(as: ServiceName(instance("Living room 2"))))
        XCTAssertFalse(ServiceName(instance("Küche")).isSame(as: ServiceName(instance("KÜCHE"))), "only ASCII folds")
        XCTAssertFalse(ServiceName(instance("a")).isSame(as: ServiceName(ServiceInstance(name: "a", type: .p2pipp, domain: try ServiceDomain("example.org")))))
    }

    func testMalformedNamesAreRefused() {
        for text in [
            "", ".", "a._p2pipp._tcp", "a..b._p2pipp._tcp.local.", #"a\"#, #"a\25._p2pipp._tcp.local."#,
            #"a\256._p2pipp._tcp.local."#, "a b._p2pipp._tcp.local.", "a\u{7F}._p2pipp._tcp.local.",
            #"\255._p2pipp._tcp.local."#, // not UTF-8
            String(repeating: "a", count: 64) + "._p2pipp._tcp.local.",
        ] {
            XCTAssertNil(ServiceName(presentation: text), text)
        }
        XCTAssertNotNil(ServiceName(presentation: String(repeating: "a", count: 63) + "._p2pipp._tcp.local."))
    }
}
