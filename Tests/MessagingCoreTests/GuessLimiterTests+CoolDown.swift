import MessagingCore
import XCTest

/// Review attacks14a F4: with `--code-cooldown` shorter than the 60 s window, a host's count
/// started afresh when its cool-down ended, so `--code-cooldown 1` let it try 5 times a second.
extension GuessLimiterTests {
    func testACoolDownShorterThanTheWindowDoesNotResetTheCount() {
        var limits = GuessLimiter.Limits()
        limits.coolDown = .seconds(1)
        limits.coolDownJitter = .zero
        limiter = GuessLimiter(limits: limits)
        var allowed: [Int] = []
        for second in 0..<130 {
            if isAllowed(begin("10.9.0.1", "key\(second)")) { allowed.append(second) }
            now += .seconds(1)
        }
        XCTAssertEqual(allowed, [0, 1, 2, 3, 4, 60, 61, 62, 63, 64, 120, 121, 122, 123, 124],
                       "five tries a window, however short the cool-down")
        let held = refusal(begin("10.9.0.1", "held"))
        XCTAssertTrue(held?.message.contains("from 10.9.0.1") ?? false, "\(held?.message ?? "")")
    }

    func testAKeysCountOutlastsAShortCoolDownToo() {
        var limits = GuessLimiter.Limits()
        limits.coolDown = .seconds(2)
        limits.coolDownJitter = .zero
        limiter = GuessLimiter(limits: limits)
        for index in 0..<5 { XCTAssertTrue(isAllowed(begin("10.9.1.\(index)", "one key")), "guess \(index)") }
        now += .seconds(10)
        XCTAssertTrue(refusal(begin("10.9.1.9", "one key"))?.message.contains("this key") ?? false, "still five in the window")
        now += .seconds(50)
        XCTAssertTrue(isAllowed(begin("10.9.1.9", "one key")), "the window has passed")
    }
}
