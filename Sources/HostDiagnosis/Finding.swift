/// How a check came out.
public enum CheckStatus: String, Sendable, Hashable, Comparable {
    /// Nothing to do.
    case ok
    /// Discovery works, but something may surprise the user (e.g. a Docker bridge Avahi uses).
    case warning
    /// Discovery fails, or fails for some peers, until this is fixed.
    case problem

    private var rank: Int {
        switch self {
        case .ok: 0
        case .warning: 1
        case .problem: 2
        }
    }

    public static func < (lhs: CheckStatus, rhs: CheckStatus) -> Bool { lhs.rank < rhs.rank }
}

/// The outcome of one check: what was seen and, unless it is ok, what fixes it.
///
/// `observed` and `fixes` may hold text read from files and processes: print them only
/// through the terminal escaping (`Console`, `TerminalSafe`).
public struct Finding: Sendable, Hashable {
    /// A stable identifier for scripts, e.g. `bus`, `avahi-daemon`, `self-test`.
    public let check: String
    /// A few words saying what was checked, e.g. "D-Bus system bus".
    public let title: String
    public let status: CheckStatus
    /// One sentence: the verdict, e.g. "avahi-daemon is not running".
    public let summary: String
    /// The facts the verdict rests on, one per line.
    public let observed: [String]
    /// The exact commands or configuration lines that fix it, one per line (empty when ok).
    public let fixes: [String]

    public init(check: String, title: String, status: CheckStatus, summary: String, observed: [String] = [], fixes: [String] = []) {
        self.check = check
        self.title = title
        self.status = status
        self.summary = summary
        self.observed = observed
        self.fixes = fixes
    }
}

/// Every finding, in the order the checks ran.
public struct Diagnosis: Sendable, Hashable {
    public let findings: [Finding]

    public init(_ findings: [Finding]) { self.findings = findings }

    /// The worst status of all findings (`ok` when there are none).
    public var status: CheckStatus { findings.map(\.status).max() ?? .ok }

    /// How many findings have `status`.
    public func count(_ status: CheckStatus) -> Int { findings.filter { $0.status == status }.count }
}
