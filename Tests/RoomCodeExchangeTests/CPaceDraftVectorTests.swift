@testable import RoomCodeExchange
import XCTest

/// The test vectors of draft-irtf-cfrg-cpace-21, Appendix A (string functions) and B.3
/// (ristretto255 with SHA-512), byte for byte.
final class CPaceDraftVectorTests: XCTestCase {
    // B.3.1 inputs
    let password = Array("Password".utf8)
    let channelIdentifier = hex("0b415f696e69746961746f720b425f726573706f6e646572")
    let sessionID = hex("7e4b4791d6a8ef019b936c79fb7f2c57")
    let initiatorData = Array("ADa".utf8)
    let responderData = Array("ADb".utf8)
    // B.3.2 - B.3.5
    let ya = hex("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08")
    let expectedYa = hex("d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157")
    let yb = hex("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d")
    let expectedYb = hex("3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258")
    let expectedK = hex("80b69a8a76457ab6a4d7f887a4bf6b55a2f80ac19c333f917a05fc9887c8b40f")
    let expectedISK = hex("""
        b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dc
        ae7b35cd2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c
        3fa2068af7900447
        """)

    func scalar(_ bytes: [UInt8]) -> SecretBuffer {
        var copy = bytes
        return SecretBuffer(taking: &copy)
    }

    func testPrependLenAndLvCat() {
        XCTAssertEqual(CPaceEncoding.prependLength([]), hex("00"))
        XCTAssertEqual(CPaceEncoding.prependLength(Array("1234".utf8)), hex("0431323334"))
        XCTAssertEqual(CPaceEncoding.prependLength((0 ..< 127).map { UInt8($0) }), [0x7f] + (0 ..< 127).map { UInt8($0) })
        XCTAssertEqual(CPaceEncoding.prependLength((0 ..< 128).map { UInt8($0) }), [0x80, 0x01] + (0 ..< 128).map { UInt8($0) })
        XCTAssertEqual(CPaceEncoding.leb128(1 << 16), [0x80, 0x80, 0x04])
        XCTAssertEqual(CPaceEncoding.lvCat(Array("1234".utf8), Array("5".utf8), [], Array("678".utf8)),
                       hex("043132333401350003363738"))
    }

    func testTranscriptIR() {
        XCTAssertEqual(CPaceEncoding.transcriptIR(initiatorShare: Array("123".utf8), initiatorData: Array("PartyA".utf8),
                                                  responderShare: Array("234".utf8), responderData: Array("PartyB".utf8)),
                       hex("03313233065061727479410332333406506172747942"))
        XCTAssertEqual(CPaceEncoding.transcriptIR(initiatorShare: Array("3456".utf8), initiatorData: Array("PartyA".utf8),
                                                  responderShare: Array("2345".utf8), responderData: Array("PartyB".utf8)),
                       hex("043334353606506172747941043233343506506172747942"))
    }

    func testGeneratorStringHashAndGenerator() throws {
        try Sodium.ready()
        let generatorString = CPaceEncoding.generatorString(dsi: Ristretto255Group.domainSeparator, prs: password,
                                                            channelIdentifier: channelIdentifier, sessionID: sessionID,
                                                            hashBlockLength: Ristretto255Group.hashBlockLength)
        XCTAssertEqual(generatorString, hex("""
            11435061636552697374726574746f3235350850617373776f726464
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000180b415f696e69746961746f
            720b425f726573706f6e646572107e4b4791d6a8ef019b936c79fb7f
            2c57
            """))
        XCTAssertEqual(Sodium.sha512(generatorString), hex("""
            da6d3ddc8802fca9058755ffd3ebde08a9c2c74945901a258482a288
            b6663af06bf645c93cd1c51512307199c80e84908916d983b34af772
            05f90851a657ee27
            """))
        XCTAssertEqual(Ristretto255Group.calculateGenerator(password: password, channelIdentifier: channelIdentifier, sessionID: sessionID),
                       hex("222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56"))
    }

    func testSharesAndSecretPoint() throws {
        try Sodium.ready()
        let generator = try XCTUnwrap(Ristretto255Group.calculateGenerator(password: password, channelIdentifier: channelIdentifier,
                                                                           sessionID: sessionID))
        let shareA = Ristretto255Group.scalarMult(scalar(ya), generator: generator)
        let shareB = Ristretto255Group.scalarMult(scalar(yb), generator: generator)
        XCTAssertEqual(shareA, expectedYa)
        XCTAssertEqual(shareB, expectedYb)
        XCTAssertEqual(Ristretto255Group.scalarMultVerified(scalar(ya), expectedYb), expectedK)
        XCTAssertEqual(Ristretto255Group.scalarMultVerified(scalar(yb), expectedYa), expectedK)
    }

    /// B.3.5: the whole initiator-responder run with the draft's scalars gives its ISK on both
    /// sides; the tags are draft §10.4's (mac_key = SHA-512(b"CPaceMac" || sid || ISK),
    /// Ta = HMAC-SHA-512(mac_key, lv_cat(Ya, ADa)), Tb likewise), computed independently with
    /// Python's hashlib and hmac from the draft's ISK.
    func testExchangeGivesTheDraftISKAndTags() throws {
        let initiator = CPace.Initiator(exchange: try CPaceExchange(
            role: .initiator, password: password, channelIdentifier: channelIdentifier, sessionID: sessionID,
            associatedData: initiatorData, scalar: scalar(ya)))
        let responder = CPace.Responder(exchange: try CPaceExchange(
            role: .responder, password: password, channelIdentifier: channelIdentifier, sessionID: sessionID,
            associatedData: responderData, scalar: scalar(yb)))
        XCTAssertEqual(initiator.share, expectedYa)
        XCTAssertEqual(responder.share, expectedYb)

        let responderTag = try responder.receive(initiatorShare: initiator.share, initiatorAssociatedData: initiator.associatedData)
        let initiatorTag = try initiator.receive(responderShare: responder.share, responderAssociatedData: responder.associatedData)
        XCTAssertEqual(initiatorTag, hex("""
            30478d28d83ae3b214295e91f4a3eb62999a8ed94575075db4a7d3bc3e4d26f1
            6c51adba12dc7771372637a46b5134e0937cddd7d820bfdd83be335e339eb57a
            """))
        XCTAssertEqual(responderTag, hex("""
            e927a7da291676f8878caae9cb70407d2f14117e6f9ff9adcfda797c4bcf2bd2
            fefd2ca3f2ddcce81b7386996c895b2f359010cc92069d5ff4ad49a977de79a6
            """))
        let initiatorKey = try initiator.confirm(responderTag: responderTag)
        let responderKey = try responder.confirm(initiatorTag: initiatorTag)
        XCTAssertEqual(initiatorKey.withUnsafeBytes { Array($0) }, expectedISK)
        XCTAssertEqual(responderKey.withUnsafeBytes { Array($0) }, expectedISK)
    }

    /// B.3.10: scalar_mult and scalar_mult_vfy on a valid element.
    func testScalarMultWithValidInput() throws {
        try Sodium.ready()
        let s = hex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05")
        let x = hex("2c3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c")
        let expected = hex("7c13645fe790a468f62c39beb7388e541d8405d1ade69d1778c5fe3e7f6b600e")
        XCTAssertEqual(Ristretto255Group.scalarMult(scalar(s), generator: x), expected)
        XCTAssertEqual(Ristretto255Group.scalarMultVerified(scalar(s), x), expected)
    }

    /// B.3.11: an invalid encoding and the identity give G.I (nil), and abort an exchange.
    func testInvalidInputsForScalarMultVfy() throws {
        try Sodium.ready()
        let s = hex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05")
        let invalid = hex("2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c")
        let identity = [UInt8](repeating: 0, count: 32)
        XCTAssertNil(Ristretto255Group.scalarMultVerified(scalar(s), invalid))
        XCTAssertNil(Ristretto255Group.scalarMultVerified(scalar(s), identity))

        for share in [invalid, identity] {
            let responder = try CPace.Responder(password: password, channelIdentifier: channelIdentifier, sessionID: sessionID)
            XCTAssertThrowsError(try responder.receive(initiatorShare: share, initiatorAssociatedData: initiatorData)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidShare)
            }
            let initiator = try CPace.Initiator(password: password, channelIdentifier: channelIdentifier, sessionID: sessionID)
            XCTAssertThrowsError(try initiator.receive(responderShare: share, responderAssociatedData: responderData)) {
                XCTAssertEqual(($0 as? RoomCodeError)?.code, .invalidShare)
            }
        }
    }
}
