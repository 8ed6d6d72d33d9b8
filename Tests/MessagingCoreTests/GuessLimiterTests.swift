import MessagingCore
import XCTest

/// Online guessing of a room code, bounded per address, per key and per room, on a clock the
/// test moves by hand.
final class GuessLimiterTests: XCTestCase {
    var now = ContinuousClock.now
    var limiter = GuessLimiter()

    /// The room's cool-down ends at a random instant; `jitter` is the draw (0 ends it when said).
    var jitter = 0.0

    func begin(_ address: String, _ key: String) -> GuessLimiter.Decision {
        limiter.begin(address: address, key: key, at: now, random: { self.jitter })
    }

    func isAllowed(_ decision: GuessLimiter.Decision) -> Bool {
        if case .allowed = decision { true } else { false }
    }

    func refusal(_ decision: GuessLimiter.Decision) -> ProtocolError? {
        if case .refused(let error) = decision { error } else { nil }
    }

    func testOneAddressGetsAFewGuessesThenACoolDownThenStartsAfresh() {
        for index in 0..<5 { XCTAssertTrue(isAllowed(begin("10.0.0.9", "key\(index)")), "guess \(index + 1)") }
        let refused = refusal(begin("10.0.0.9", "another"))
        XCTAssertEqual(refused?.code, .tooManyAttempts)
        XCTAssertTrue(refused?.message.contains("10.0.0.9") ?? false, refused?.message ?? "")
        XCTAssertTrue(refused?.message.contains("try again in 60 s") ?? false, refused?.message ?? "")
        XCTAssertTrue(isAllowed(begin("10.0.0.8", "other")), "another address is not held back")
        now += .seconds(59)
        XCTAssertNotNil(refusal(begin("10.0.0.9", "x")), "still cooling down")
        now += .seconds(1)
        for index in 0..<5 { XCTAssertTrue(isAllowed(begin("10.0.0.9", "again\(index)")), "after the cool-down, guess \(index + 1)") }
        XCTAssertNotNil(refusal(begin("10.0.0.9", "x")))
    }

    func testOneKeyFromManyAddressesIsLimitedToo() {
        for index in 0..<5 { XCTAssertTrue(isAllowed(begin("10.0.1.\(index)", "mallory"))) }
        XCTAssertTrue(refusal(begin("10.0.2.1", "mallory"))?.message.contains("this key") ?? false)
    }

    func testTheRoomAsAWholeHasACap() {
        // Four guesses each from many addresses and keys: under every per-address limit.
        var allowed = 0
        for index in 0..<100 {
            if isAllowed(begin("10.1.0.\(index / 4)", "key\(index)")) { allowed += 1 }
        }
        // Many clean hosts spend the room's 20 and then the one guess the reserve holds: all wait.
        XCTAssertEqual(allowed, 21, "the overall cap and the reserve's one guess at a time")
        XCTAssertTrue(refusal(begin("10.1.0.0", "key0-again"))?.message.contains("in this room") ?? false, "a host that guessed waits")
        XCTAssertTrue(refusal(begin("10.9.8.1", "fresher"))?.message.contains("in this room") ?? false, "so does a clean one")
        now += .seconds(60)
        XCTAssertTrue(isAllowed(begin("10.1.0.0", "key0-again")), "the right code works after the cool-down")
    }

    func testGuessesOutsideTheWindowNoLongerCount() {
        for index in 0..<4 { XCTAssertTrue(isAllowed(begin("10.0.0.9", "k\(index)"))) }
        now += .seconds(61)
        for index in 0..<4 { XCTAssertTrue(isAllowed(begin("10.0.0.9", "l\(index)")), "a slow guesser gets 4 more") }
    }

    func testARightCodeIsGivenBackAndLiftsTheCoolDownItStarted() {
        for index in 0..<4 { XCTAssertTrue(isAllowed(begin("10.0.0.9", "k\(index)"))) }
        guard case .allowed(let fifth) = begin("10.0.0.9", "alice") else { return XCTFail("the fifth guess") }
        limiter.succeeded(fifth)
        XCTAssertTrue(isAllowed(begin("10.0.0.9", "bob")), "the success did not count")
        XCTAssertNotNil(refusal(begin("10.0.0.9", "carol")))
    }

    func testTablesStayBoundedUnderAFloodOfAddressesAndKeys() {
        var limits = GuessLimiter.Limits()
        limits.overall = .max
        limits.trackedAddresses = 64
        limits.trackedKeys = 64
        limiter = GuessLimiter(limits: limits)
        var refused = 0
        for index in 0..<10_000 {
            now += .milliseconds(10)
            if refusal(begin("10.\(index / 65536).\(index / 256 % 256).\(index % 256)", "key\(index)")) != nil { refused += 1 }
            XCTAssertLessThanOrEqual(limiter.trackedCount.addresses, 64)
            XCTAssertLessThanOrEqual(limiter.trackedCount.keys, 64)
        }
        // 64 new entries fit in each minute (100 guesses a second arrive): the rest is refused,
        // and old entries are let go once their minute has passed.
        XCTAssertGreaterThan(refused, 8000)
        XCTAssertLessThan(refused, 10_000)
    }
}

/// Issue 13 review: a key the room lists is never held back by what other hosts did.
extension GuessLimiterTests {
    func testAListedKeyIsNotHeldBackByTheRoomOrItsAddress() {
        for index in 0..<100 { _ = begin("10.1.0.\(index / 5)", "key\(index)") }
        XCTAssertNotNil(refusal(begin("10.9.9.9", "fresh")), "the room's cap is reached")
        for index in 0..<5 { _ = begin("10.0.0.7", "noise\(index)") }
        XCTAssertNotNil(refusal(begin("10.0.0.7", "another")), "the address is cooling down")
        guard case .allowed(let attempt) = limiter.begin(address: "10.0.0.7", key: "listed", listed: true, at: now) else {
            return XCTFail("a listed key is refused")
        }
        limiter.succeeded(attempt)
        for _ in 0..<10 {
            guard case .allowed(let again) = limiter.begin(address: "10.0.0.7", key: "listed", listed: true, at: now) else {
                return XCTFail("a listed key with the right code is refused on a reconnect")
            }
            limiter.succeeded(again)
        }
    }

    func testAListedKeyStillGuessesNoFasterThanAnyKey() {
        for _ in 0..<5 { XCTAssertTrue(isAllowed(limiter.begin(address: "10.0.0.7", key: "insider", listed: true, at: now))) }
        XCTAssertTrue(refusal(limiter.begin(address: "10.0.0.7", key: "insider", listed: true, at: now))?.message.contains("this key") ?? false)
        XCTAssertTrue(isAllowed(begin("10.0.0.7", "other")), "the listed key's guesses cost its address nothing")
    }
}

/// Issue 13 review: one host spending the room's guesses does not keep a fresh member out.
extension GuessLimiterTests {
    func testOneHostSpendingTheRoomsGuessesLeavesAFreshMemberItsWay() {
        // One host with many IPv4 addresses spends the room's 20 right after each cool-down.
        for round in 0..<3 {
            for index in 0..<20 { _ = begin("10.5.\(round).\(index / 5)", "attacker\(round)-\(index)") }
            guard case .allowed(let attempt) = limiter.begin(address: "10.7.0.1", key: "newcomer\(round)", at: now) else {
                return XCTFail("round \(round): a fresh member is kept out")
            }
            limiter.succeeded(attempt)
            XCTAssertNotNil(refusal(begin("10.5.\(round).0", "attacker-more")), "the attacking addresses wait")
            now += .seconds(61)
        }
    }
}
