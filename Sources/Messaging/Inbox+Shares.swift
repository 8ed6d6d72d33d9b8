/// The space transfers under way are promised, and each sender's share of it.
///
/// An admitted transfer is promised the bytes it still needs, so that it is never cut short by
/// another's: a member that offered all the free space, then brought a trickle, kept the inbox
/// full for everyone (attacks15y finding 2). So what others hold counts at most their share of
/// the space offers may use (`pool`: free space less the reserve): a quarter for one member, a
/// half for one host (its members together). A newcomer is admitted when all it and its member
/// still need fits beside the others' shares; a sender alone may still take nearly all the free
/// space, but past its share it is promised no more than it can write: while it holds more
/// than its share, the free space is checked again as its data is written (`consumed`), and it is
/// ended, its data kept for resuming, once what it still needs no longer fits beside the
/// others' shares and the reserve (less 16 MiB of slack: `Inbox.reserveSlack`).
struct Promises {
    /// The bytes each admitted transfer may still write.
    var remaining: [PartialKey: UInt64] = [:]
    /// The space offers may use when it was last measured (free less the reserve).
    var pool: UInt64 = 0

    /// One member's share of `pool`: a quarter.
    static let memberShareDivisor: UInt64 = 4
    /// One host's share of `pool`: a half.
    static let hostShareDivisor: UInt64 = 2

    var count: Int { remaining.count }

    /// What `member`'s transfers still need, in full.
    func needed(by member: String) -> UInt64 {
        remaining.reduce(0) { $1.key.member == member ? Promises.adding($0, $1.value) : $0 }
    }

    /// What transfers of members other than `member` hold of `pool`: each member at most
    /// a quarter of it, each host (its other members together) at most a half.
    func held(byOthersThan member: String, pool: UInt64) -> UInt64 {
        var members: [String: (host: String, bytes: UInt64)] = [:]
        for (key, bytes) in remaining where key.member != member {
            let entry = members[key.member + "\n" + key.host, default: (key.host, 0)]
            members[key.member + "\n" + key.host] = (entry.host, Promises.adding(entry.bytes, bytes))
        }
        var hosts: [String: UInt64] = [:]
        for entry in members.values {
            hosts[entry.host] = Promises.adding(hosts[entry.host] ?? 0, min(entry.bytes, pool / Promises.memberShareDivisor))
        }
        return hosts.values.reduce(0) { Promises.adding($0, min($1, pool / Promises.hostShareDivisor)) }
    }

    /// Whether `member` may be promised `need` more bytes (beside what it already needs) out of
    /// `pool`, with what others hold counted by their shares; also what counts as promised.
    func fits(_ need: UInt64, for member: String, pool: UInt64) -> (fits: Bool, promised: UInt64) {
        let promised = Promises.adding(needed(by: member), held(byOthersThan: member, pool: pool))
        return (promised <= pool && need <= pool - promised, promised)
    }

    /// Whether `key`'s member or host holds more than its share of `pool` as last measured:
    /// then part of what it needs is not set aside, and the space is checked as its data comes.
    func isBeyondShare(_ key: PartialKey) -> Bool {
        let own = needed(by: key.member)
        let host = remaining.reduce(0) { $1.key.host == key.host ? Promises.adding($0, $1.value) : $0 }
        return own > pool / Promises.memberShareDivisor || host > pool / Promises.hostShareDivisor
    }

    static func adding(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
