extension GuessLimiter {
    /// Recent attempts of one address, one key or the room, and its cool-down.
    struct Counter: Sendable, Hashable {
        /// Attempts within the window (guesses, and for an address also refused tries); at
        /// most the counter's limit of them, since reaching it starts the cool-down.
        var times: [ContinuousClock.Instant] = []
        /// Those of `times` that were let through as guesses (a refused try is not a guess).
        var guesses: [ContinuousClock.Instant] = []
        var blockedUntil: ContinuousClock.Instant?
        /// When the refusal says the cool-down ends (`blockedUntil` may be later: jitter).
        var announcedUntil: ContinuousClock.Instant?
        /// The guess that reached the limit (a success gives its block back too).
        var blockedBy: ContinuousClock.Instant?

        /// Lets go of what no longer counts at `now`: an expired cool-down, attempts older than
        /// `window`. The two are apart: the end of a cool-down shorter than the window does not
        /// forget the attempts still inside it (review attacks14a F4).
        mutating func forget(before now: ContinuousClock.Instant, window: Duration) {
            if let until = blockedUntil, until <= now {
                blockedUntil = nil
                announcedUntil = nil
                blockedBy = nil
            }
            if blockedUntil == nil {
                times.removeAll { now - $0 >= window }
                guesses.removeAll { now - $0 >= window }
            }
        }

        var isIdle: Bool { times.isEmpty && blockedUntil == nil }

        /// No guess was let through within the window and no cool-down runs (refused tries
        /// alone leave a host clean: a member told to wait keeps its claim on the reserve).
        var hasNotGuessed: Bool { guesses.isEmpty && blockedUntil == nil }

        /// How long the refusal says to wait, or nil when not cooling down at `now`.
        func refusal(at now: ContinuousClock.Instant) -> Duration? {
            guard let until = blockedUntil, until > now else { return nil }
            return max((announcedUntil ?? until) - now, .zero)
        }

        /// Counts an attempt; reaching `limit` within `window` starts the cool-down, which ends
        /// `extra` after the `coolDown` the refusal announces, and not before the oldest of the
        /// `limit` attempts leaves the window (so a short cool-down still allows `limit` a window).
        mutating func count(_ now: ContinuousClock.Instant, guess: Bool, limit: Int, coolDown: Duration, window: Duration,
                            extra: Duration = .zero) {
            guard blockedUntil == nil else { return }
            times.append(now)
            if guess { guesses.append(now) }
            if times.count >= limit {
                let windowEnds = times[times.count - limit] + window
                blockedUntil = max(now + coolDown + extra, windowEnds)
                announcedUntil = max(now + coolDown, windowEnds)
                blockedBy = now
            }
        }

        /// Gives back the guess made at `instant`.
        mutating func giveBack(_ instant: ContinuousClock.Instant) {
            if let index = times.firstIndex(of: instant) { times.remove(at: index) }
            if let index = guesses.firstIndex(of: instant) { guesses.remove(at: index) }
            if blockedBy == instant {
                blockedUntil = nil
                announcedUntil = nil
                blockedBy = nil
            }
        }
    }
}
