/// What went wrong talking to a unicast DNS-SD zone, with a message that says what to do.
///
/// One error type for the module: `code` says which kind of failure (compare it with the
/// static members), `message` is the sentence for the user, `detail` keeps the raw value
/// (an rcode or ldns status text) when there is one. Messages never contain a TSIG secret.
public struct UnicastDNSSDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; a struct over a private enum so kinds can be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable { case noSuchZone, refused, badKey, unreachable, connectionRefused, timeout, conflict, keyFile, invalidName, malformedReply, server, tooLarge, cancelled }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The server is not authoritative for the zone (NOTAUTH/NXDOMAIN for the zone itself).
        public static let noSuchZone = Code(.noSuchZone)
        /// The server refused the update or query (REFUSED): the key is not granted for it.
        public static let refused = Code(.refused)
        /// The server did not accept the TSIG signature or key, or its answer's signature is wrong.
        public static let badKey = Code(.badKey)
        /// The server could not be reached (no route, port closed).
        public static let unreachable = Code(.unreachable)
        /// The server's host is there but nothing listens on its DNS port (ICMP port
        /// unreachable, or a TCP reset).
        public static let connectionRefused = Code(.connectionRefused)
        /// The server did not answer in time.
        public static let timeout = Code(.timeout)
        /// The instance name is taken by someone else (a prerequisite failed).
        public static let conflict = Code(.conflict)
        /// The TSIG key file is unreadable, readable by others, or not in `tsig-keygen` form.
        public static let keyFile = Code(.keyFile)
        /// A name given to us is not a valid DNS name (label or total length, empty label).
        public static let invalidName = Code(.invalidName)
        /// The server's answer broke DNS rules or our bounds; it was ignored.
        public static let malformedReply = Code(.malformedReply)
        /// Any other server error (SERVFAIL, NOTIMP, ...).
        public static let server = Code(.server)
        /// A record set would not fit in one DNS message.
        public static let tooLarge = Code(.tooLarge)
        /// The calling task was cancelled (SIGINT, or a deadline of the caller) mid-exchange.
        public static let cancelled = Code(.cancelled)

        public var description: String { kind.rawValue }
    }

    /// Which kind of failure.
    public let code: Code
    /// The sentence for the user: what went wrong and what to do.
    public let message: String
    /// The raw value behind it (an rcode or ldns status), when there is one.
    public let detail: String?

    /// Makes an error; `message` must say what to do.
    public init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail
    }

    public var description: String { detail.map { "\(message) (\($0))" } ?? message }
}
