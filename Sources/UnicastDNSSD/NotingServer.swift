import Synchronization

/// Notes the instance names whose records an update is about to add before passing it on: what
/// a registration cancelled mid-exchange may have left in the zone.
public struct NotingServer<Base: UnicastDNSServer>: UnicastDNSServer {
    /// The names of the instances whose SRV an update added or tried to add and may have
    /// written, in order.
    public final class Log: Sendable {
        private let names = Mutex<[String]>([])

        public init() {}
        /// Notes `name`; returns whether it is new in the log.
        fileprivate func note(_ name: String) -> Bool {
            names.withLock { names in
                guard !names.contains(name) else { return false }
                names.append(name)
                return true
            }
        }
        fileprivate func forget(_ forgotten: [String]) { names.withLock { $0.removeAll(where: forgotten.contains) } }
        /// The names noted, in order.
        public var all: [String] { names.withLock { $0 } }
    }

    /// The server the updates and queries go to.
    public let base: Base
    /// Where the names are noted.
    public let log: Log

    public init(base: Base, log: Log) {
        self.base = base
        self.log = log
    }

    public func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome {
        var noted: [String] = []
        for case .add(let record) in update.changes {
            if case .service = record.data, let label = record.name.labels.first {
                let name = String(decoding: label, as: UTF8.self)
                if log.note(name) { noted.append(name) }
            }
        }
        let outcome = try await base.update(update)
        // The server answered that a prerequisite failed (the name is taken): nothing of this
        // update was written, so a name it alone noted is not ours to withdraw: it may be
        // another machine's identical registration.
        if outcome == .prerequisiteFailed { log.forget(noted) }
        return outcome
    }

    public func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] {
        try await base.query(name, type)
    }

    public func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? {
        try await base.serial(of: zone)
    }
}
