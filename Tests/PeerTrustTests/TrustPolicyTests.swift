import DiscoveryCore
import PeerTrust
import TransportCore
import XCTest

final class TrustPolicyTests: XCTestCase {
    let keyA = PublicKeyFingerprint("SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0")!
    let keyB = PublicKeyFingerprint("SHA256:XPuH+NNngs5nQ100AK0YcKqXHX6ZKzroKilP3hHY28o")!
    let path = "/home/u/.config/svc/known_peers"

    func pin(_ key: PublicKeyFingerprint, line: Int = 3) -> KnownPeers.Pin {
        var peers = KnownPeers(parsing: Array(String(repeating: "#\n", count: line - 1).utf8))
        return peers.pin(key, for: ServiceInstance(name: "Living room", type: .p2pipp, domain: .local))
    }

    func policy(pin: KnownPeers.Pin? = nil, fingerprint: String? = nil, strict: Bool = false, plaintext: Bool = false) -> TrustPolicy {
        TrustPolicy(serviceName: "Living room", pin: pin, knownPeersPath: path, fingerprint: fingerprint, strict: strict, allowPlaintext: plaintext)
    }

    func expectation(_ decision: TrustPolicy.Decision, file: StaticString = #filePath, line: UInt = #line) -> TrustPolicy.Expectation? {
        guard case .secure(let expectation) = decision else { XCTFail("expected TLS, got \(decision)", file: file, line: line); return nil }
        return expectation
    }

    func refusal(_ decision: TrustPolicy.Decision, file: StaticString = #filePath, line: UInt = #line) -> TrustPolicy.Refusal? {
        guard case .refuse(let refusal) = decision else { XCTFail("expected a refusal, got \(decision)", file: file, line: line); return nil }
        return refusal
    }

    let session = { (key: PublicKeyFingerprint) in SecureSession(peerKey: key, safetyCode: "123 456 789 012") }

    // 1. A pin: only its key, whatever the TXT record says; --fingerprint must agree.
    func testAPinnedServiceMustPresentThePinnedKey() throws {
        for announced in [TrustPolicy.AnnouncedKey.key(keyB), .absent, .malformed] {
            let rule = try XCTUnwrap(expectation(policy(pin: pin(keyA)).decide(announced: announced)))
            XCTAssertTrue(rule.accepts(keyA))
            XCTAssertFalse(rule.accepts(keyB), "the TXT record does not override a pin")
            XCTAssertFalse(rule.pinsOnSuccess)
        }
        let agreeing = policy(pin: pin(keyA), fingerprint: "ungWv48Bz+pB")
        XCTAssertNil(agreeing.refusalBeforeLookup())
        XCTAssertTrue(try XCTUnwrap(expectation(agreeing.decide(announced: .absent))).accepts(keyA))
        XCTAssertFalse(try XCTUnwrap(expectation(agreeing.decide(announced: .absent))).pinsOnSuccess)
        XCTAssertNil(policy(pin: pin(keyA), strict: true).refusalBeforeLookup(), "--strict is satisfied by a pin")
    }

    func testAFingerprintThatDisagreesWithThePinIsAUsageError() throws {
        let refused = try XCTUnwrap(policy(pin: pin(keyA), fingerprint: "XPuH+NNngs5n").refusalBeforeLookup())
        XCTAssertEqual(refused.exitCode, 64)
        XCTAssertEqual(refused.message, "--fingerprint XPuH+NNngs5n does not match the key pinned for 'Living room', \(keyA.full) ('\(path)' line 3); to trust another key, first run: svc-connect --forget 'Living room'")
        XCTAssertEqual(refusal(policy(pin: pin(keyA), fingerprint: "XPuH+NNngs5n").decide(announced: .key(keyB))), refused)
    }

    func testTheKeyChangedWarning() throws {
        let rule = try XCTUnwrap(expectation(policy(pin: pin(keyA, line: 7)).decide(announced: .key(keyA))))
        let refused = rule.rejection(of: keyB)
        XCTAssertEqual(refused.exitCode, 77)
        XCTAssertEqual(refused.message, "the key of 'Living room' has changed: it presented \(keyB.full), not its pinned \(keyA.full) ('\(path)' line 7); nothing was sent. If its publisher really has a new key, run svc-connect --forget 'Living room' and connect again")
        XCTAssertEqual(refused.warning, """
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            @@@ WARNING: THE KEY OF 'Living room' HAS CHANGED @@@
            @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
            IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
            Someone may be answering in place of 'Living room' to read and change what you
            say (a man-in-the-middle attack), or its publisher has a new key (a new computer,
            a lost identity.pem). Nothing was sent.
              pinned key:    \(keyA.full)
                             in '\(path)' line 7
              presented key: \(keyB.full)
            Ask the publisher which key svc-publish shows. If it is the presented one, forget
            the old pin and connect again:
              svc-connect --forget 'Living room'
            """)
        XCTAssertTrue(TrustPolicy.keyChangedWarning(serviceName: "it's", pinned: pin(keyA), presented: keyB, knownPeersPath: path)
            .hasSuffix("svc-connect --forget 'it'\\''s'"), "the command can be pasted into a shell")
    }

    func testAcceptedPinnedKeyIsDescribed() throws {
        let rule = try XCTUnwrap(expectation(policy(pin: pin(keyA)).decide(announced: .absent)))
        XCTAssertEqual(rule.acceptance(of: session(keyA)),
                       "'Living room' presented its pinned key ungWv48Bz+pB ('\(path)' line 3); safety code 123 456 789 012")
    }

    // 2. --fingerprint without a pin: only a matching key, pinned on success.
    func testAFingerprintAcceptsOnlyAMatchingKeyAndPinsIt() throws {
        for given in ["ungWv48Bz+pB", "SHA256:ungWv48Bz+pBQUDeX", keyA.full] {
            let rule = try XCTUnwrap(expectation(policy(fingerprint: given, strict: true).decide(announced: .key(keyB))))
            XCTAssertTrue(rule.accepts(keyA), given)
            XCTAssertFalse(rule.accepts(keyB), "the TXT record does not matter with --fingerprint")
            XCTAssertTrue(rule.pinsOnSuccess)
        }
        let rule = try XCTUnwrap(expectation(policy(fingerprint: "ungWv48Bz+pB").decide(announced: .absent)))
        XCTAssertEqual(rule.rejection(of: keyB).exitCode, 77)
        XCTAssertEqual(rule.rejection(of: keyB).message, "'Living room' presented the key \(keyB.full), which does not match --fingerprint ungWv48Bz+pB: someone may be answering in its place, or the fingerprint is mistyped; nothing was sent. Compare it with the key svc-publish shows")
        XCTAssertEqual(rule.acceptance(of: session(keyA)),
                       "'Living room' presented the key given with --fingerprint: pinned it, \(keyA.full) (short ungWv48Bz+pB); safety code 123 456 789 012")
    }

    // 3. --strict without a pin or --fingerprint: refused before anything is looked up.
    func testStrictWithoutAPinIsRefusedBeforeLookup() throws {
        let refused = try XCTUnwrap(policy(strict: true).refusalBeforeLookup())
        XCTAssertEqual(refused.exitCode, 77)
        XCTAssertEqual(refused.kind, .untrusted)
        XCTAssertTrue(refused.message.hasPrefix("'Living room' is not in known_peers; give --fingerprint"), refused.message)
        XCTAssertEqual(refusal(policy(strict: true).decide(announced: .key(keyA))), refused)
    }

    // 4. First contact: the announced key, pinned on success.
    func testFirstContactTrustsTheAnnouncedKey() throws {
        XCTAssertNil(policy().refusalBeforeLookup())
        let rule = try XCTUnwrap(expectation(policy().decide(announced: .key(keyA))))
        XCTAssertTrue(rule.accepts(keyA))
        XCTAssertFalse(rule.accepts(keyB))
        XCTAssertTrue(rule.pinsOnSuccess)
        XCTAssertEqual(rule.acceptance(of: session(keyA)),
                       "first contact with 'Living room': pinned its key \(keyA.full) (short ungWv48Bz+pB); safety code 123 456 789 012: compare it with the publisher's screen to be sure nobody is in between")
        let refused = rule.rejection(of: keyB)
        XCTAssertEqual(refused.exitCode, 77)
        XCTAssertNil(refused.warning)
        XCTAssertEqual(refused.message, "'Living room' presented the key \(keyB.full), not the key its announcement (TXT key=) names, \(keyA.full): someone may be answering in its place; nothing was sent and nothing was pinned. If you know its key, give it with --fingerprint (svc-publish shows it)")
    }

    func testFirstContactNeedsAnAnnouncedKey() throws {
        let absent = try XCTUnwrap(refusal(policy().decide(announced: .absent)))
        XCTAssertEqual(absent.exitCode, 77)
        XCTAssertTrue(absent.message.hasPrefix("'Living room' announces no key (its TXT record has no key= item)"), absent.message)
        let malformed = try XCTUnwrap(refusal(policy().decide(announced: .malformed)))
        XCTAssertEqual(malformed.exitCode, 77)
        XCTAssertTrue(malformed.message.contains("announces a key= item that is not a key"), malformed.message)
    }

    func testAnnouncedKeyFromTheTXTValue() {
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: nil), .absent)
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: keyA.full), .key(keyA))
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: "ungWv48Bz+pB"), .malformed, "a short key announces nothing")
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: String(keyA.full.dropFirst(7))), .malformed, "the full form has SHA256:")
        XCTAssertEqual(TrustPolicy.AnnouncedKey(txtValue: ""), .malformed)
    }

    func testAfterPinningAReconnectExpectsThePin() throws {
        let first = policy()
        let pinned = first.pinned(pin(keyA))
        let rule = try XCTUnwrap(expectation(pinned.decide(announced: .key(keyB))))
        XCTAssertTrue(rule.accepts(keyA))
        XCTAssertFalse(rule.accepts(keyB), "a changed TXT record on reconnect is the key-changed warning")
        XCTAssertTrue(rule.rejection(of: keyB).warning?.contains("HAS CHANGED") == true)
        let fromFingerprint = policy(fingerprint: "ungWv48Bz+pB").pinned(pin(keyA))
        XCTAssertNil(fromFingerprint.fingerprint)
        XCTAssertFalse(try XCTUnwrap(expectation(fromFingerprint.decide(announced: .absent))).pinsOnSuccess)
    }

    // --allow-plaintext: no key is checked, so never for a pin, and not with --fingerprint or --strict.
    func testPlaintext() throws {
        guard case .plaintext(let note) = policy(plaintext: true).decide(announced: .key(keyA)) else { return XCTFail("plaintext") }
        XCTAssertEqual(note, "joining 'Living room' without TLS (--allow-plaintext): its key is not checked and anyone on the network can read and change what is said")
        let pinned = try XCTUnwrap(policy(pin: pin(keyA), plaintext: true).refusalBeforeLookup())
        XCTAssertEqual(pinned.exitCode, 64)
        XCTAssertEqual(pinned.message, "--allow-plaintext: 'Living room' is pinned to \(keyA.full) ('\(path)' line 3), so it is joined only over TLS with that key; leave out --allow-plaintext, or if it really lost its key, run svc-connect --forget 'Living room' first")
        for contradicting in [policy(fingerprint: "ungWv48Bz+pB", plaintext: true), policy(strict: true, plaintext: true)] {
            let refused = try XCTUnwrap(contradicting.refusalBeforeLookup())
            XCTAssertEqual(refused.exitCode, 64)
            XCTAssertTrue(refused.message.hasPrefix("--allow-plaintext cannot go with --"), refused.message)
        }
    }
}
