import MessagingCore
import XCTest

/// Issue 13 review: one machine with 120 link-local aliases kept every new member out. The
/// limiter's side of the fix: refused tries count against their host, the reserve is handed out
/// one guess at a time, and the room's cool-down ends at a random instant after what it says.
extension GuessLimiterTests {
    /// Spends the room's 20 guesses from 5 hosts that then have guessed (not clean).
    func spendTheRoom(_ tag: String = "", guesses: Int = 20) {
        for index in 0..<guesses { XCTAssertTrue(isAllowed(begin("10.5.0.\(index / 4)", "spender\(tag)\(index)")), "guess \(index)") }
    }

    func testRefusedTriesCountAgainstTheirHost() {
        spendTheRoom()
        // A host that has not guessed takes the reserve's one guess; the next is refused.
        XCTAssertTrue(isAllowed(begin("10.6.0.1", "first")))
        for index in 0..<4 {
            XCTAssertTrue(refusal(begin("10.6.0.2", "poll\(index)"))?.message.contains("in this room") ?? false, "try \(index + 1)")
        }
        let own = refusal(begin("10.6.0.2", "poll5"))
        XCTAssertTrue(own?.message.contains("in this room") ?? false, "the fifth try is still refused for the room")
        let held = refusal(begin("10.6.0.2", "poll6"))
        XCTAssertTrue(held?.message.contains("from 10.6.0.2") ?? false, "five refused tries hold the host back itself: \(held?.message ?? "")")
        // Its cool-down is its own: the room's ends, the host still waits.
        now += .seconds(59)
        XCTAssertNotNil(refusal(begin("10.6.0.2", "later")))
        now += .seconds(1)
        XCTAssertTrue(isAllowed(begin("10.6.0.2", "after")), "the host starts afresh after its cool-down")
    }

    func testTheReserveIsHandedOutOneGuessAtATimeAtASteadyRate() {
        spendTheRoom()
        var allowed: [Int] = []
        // Every second for the room's minute, two hosts that have not guessed try (new ones each time).
        for second in 0..<60 {
            for host in 0..<2 where isAllowed(begin("10.8.\(second).\(host)", "fresh\(second)-\(host)")) { allowed.append(second) }
            now += .seconds(1)
        }
        XCTAssertEqual(allowed, [0, 12, 24, 36, 48], "one guess every 60 s / 5, never five at once")
    }

    func testTheReservesNextGuessComesUpToHalfAnIntervalLaterAtRandom() {
        spendTheRoom()
        jitter = 1
        var allowed: [Int] = []
        for second in 0..<60 {
            if isAllowed(begin("10.8.\(second).1", "fresh\(second)")) { allowed.append(second) }
            now += .seconds(1)
        }
        XCTAssertEqual(allowed, [0, 18, 36, 54])
    }

    func testAHostThatGuessedDoesNotGetTheReserve() {
        XCTAssertTrue(isAllowed(begin("10.9.0.1", "early")))
        spendTheRoom(guesses: 19)
        XCTAssertNotNil(refusal(begin("10.9.0.1", "new-key")), "its address guessed within the minute")
        XCTAssertTrue(isAllowed(begin("10.9.0.2", "fresh")), "a host that has not guessed gets it")
    }

    func testAMemberToldToWaitKeepsItsClaimOnTheReserve() {
        spendTheRoom()
        XCTAssertTrue(isAllowed(begin("10.6.0.9", "someone")))
        XCTAssertNotNil(refusal(begin("10.7.0.1", "newcomer")), "the reserve's guess is taken")
        now += .seconds(12)
        guard case .allowed(let attempt) = begin("10.7.0.1", "newcomer") else {
            return XCTFail("a refused try does not make a host look like a guesser")
        }
        limiter.succeeded(attempt)
        XCTAssertTrue(isAllowed(begin("10.7.0.2", "next")), "a right code gives the reserve's guess back")
    }

    func testTheRoomsCoolDownEndsAtARandomInstantAfterWhatItsRefusalSays() {
        var limits = GuessLimiter.Limits()
        limits.reservedForClean = 0
        var ends: [Int] = []
        for draw in [0.0, 0.5, 1.0] {
            limiter = GuessLimiter(limits: limits)
            jitter = draw
            let start = now
            spendTheRoom("\(draw)")
            let said = refusal(begin("10.5.0.0", "told"))
            XCTAssertTrue(said?.message.contains("try again in 60 s") ?? false, said?.message ?? "")
            // A new host each second (no reserve here): the first one let in marks the end.
            var second = 0
            while second < 120 {
                now = start + .seconds(second)
                if isAllowed(begin("10.20.\(second).1", "probe\(second)")) { break }
                second += 1
            }
            ends.append(second)
            now = start + .seconds(200)
        }
        XCTAssertEqual(ends, [60, 70, 80], "coolDown plus the draw times coolDownJitter (20 s)")
    }

    func testOneMachineWithManyLinkLocalAddressesCannotKeepAFreshMemberOut() {
        // What the review did, as the room sees it: every alias is one host (fe80::/10%veth0),
        // 30 new keys per burst, each burst when the last refusal said; a new member on another
        // host tries every 7 s with the right code.
        let attacker = "fe80::/10%veth0"
        var nextBurst = now
        var memberTries = 0
        let end = now + .seconds(150)
        var burst = 0
        while now < end {
            if now >= nextBurst {
                var wait = 1
                for index in 0..<30 {
                    if let error = refusal(begin(attacker, "burst\(burst)-\(index)")),
                       let said = error.message.split(separator: " ").dropLast().last.flatMap({ Int($0) }) {
                        wait = max(wait, said)
                    }
                }
                burst += 1
                nextBurst = now + .seconds(wait)
            }
            memberTries += 1
            guard case .allowed(let attempt) = begin("10.77.0.2", "member\(memberTries)") else {
                return XCTFail("try \(memberTries) of the new member was refused during the attack")
            }
            limiter.succeeded(attempt)
            now += .seconds(7)
        }
        XCTAssertEqual(memberTries, 22)
    }

    func testTablesStayBoundedWhileRefusedTriesAreCounted() {
        var limits = GuessLimiter.Limits()
        limits.trackedAddresses = 64
        limits.trackedKeys = 64
        limiter = GuessLimiter(limits: limits)
        for index in 0..<10_000 {
            now += .milliseconds(10)
            _ = begin("10.\(index / 65536).\(index / 256 % 256).\(index % 256)", "key\(index)")
            XCTAssertLessThanOrEqual(limiter.trackedCount.addresses, 64)
            XCTAssertLessThanOrEqual(limiter.trackedCount.keys, 64)
        }
    }
}
