/// The record types this module reads and writes.
public enum RecordType: UInt16, Sendable, CaseIterable {
    case a = 1, soa = 6, ptr = 12, txt = 16, aaaa = 28, srv = 33, any = 255
}

/// One DNS UPDATE (RFC 2136) to a zone: prerequisites that must hold, then changes that are
/// made all together or not at all.
public struct DNSUpdate: Sendable, Hashable {
    /// A condition the server checks before changing anything.
    public enum Prerequisite: Sendable, Hashable {
        /// No record of any type has this name (fails with YXDOMAIN).
        case nameNotInUse(DNSName)
        /// This exact record exists (value-dependent; fails with NXRRSET).
        case recordExists(ResourceRecord)
    }

    /// One change to the zone.
    public enum Change: Sendable, Hashable {
        /// Adds the record (or renews its TTL when it is there).
        case add(ResourceRecord)
        /// Deletes this one record, leaving others of its set.
        case deleteRecord(ResourceRecord)
        /// Deletes every record of the name.
        case deleteName(DNSName)
        /// Deletes every record of one type at the name (an RRset).
        case deleteRecordSet(DNSName, RecordType)
    }

    public let zone: DNSName
    public let prerequisites: [Prerequisite]
    public let changes: [Change]

    public init(zone: DNSName, prerequisites: [Prerequisite], changes: [Change]) {
        self.zone = zone
        self.prerequisites = prerequisites
        self.changes = changes
    }
}

/// What the server did with an update it accepted to judge.
public enum UpdateOutcome: Sendable, Equatable {
    /// Every change was made.
    case applied
    /// A prerequisite did not hold; nothing was changed.
    case prerequisiteFailed
}

/// The seam between DNS-SD logic and the wire: one DNS server that answers queries and takes
/// signed updates. `LDNSServer` speaks to a real server through ldns; tests can stand in a
/// server of their own.
public protocol UnicastDNSServer: Sendable {
    /// Sends a signed update and reports whether it was applied.
    /// - Throws: `UnicastDNSSDError` for everything but a failed prerequisite: refused, bad
    ///   key, no such zone, unreachable, timeout.
    func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome

    /// Asks for the records of one name and type; an empty answer when there are none.
    /// Every record is listed however many there are (EDNS0, then TCP when truncated).
    /// - Throws: `UnicastDNSSDError` for an unreachable server, a timeout, a refusal or a
    ///   malformed answer.
    func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord]

    /// The serial number of the zone's SOA record, which the primary server raises on every
    /// change: a cheap "did anything change?" (nil when the server sent no SOA for it).
    /// - Throws: `.noSuchZone` when the server does not serve `zone`, or the errors of `query`.
    func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32?
}
