import Synchronization
import UnicastDNSSD

/// A zone held in memory with RFC 2136's semantics for the prerequisites and changes this
/// module sends: the stand-in for BIND when testing the directory's logic.
final class InMemoryDNSServer: UnicastDNSServer {
    private let records = Mutex<[ResourceRecord]>([])
    private let updates = Mutex(0)
    private let queries = Mutex<[RecordType: Int]>([:])
    /// Raised on every applied update, as a primary server raises its SOA serial.
    private let serialNumber = Mutex<UInt32>(1)
    /// How long each query takes to answer: long enough for concurrent ones to overlap.
    private let queryTime: Duration
    /// The queries being answered now, and the most that ever were at once.
    private let inFlight = Mutex<(now: Int, most: Int)>((0, 0))

    init(queryTime: Duration = .zero) { self.queryTime = queryTime }

    /// The most queries that were being answered at once.
    var mostQueriesAtOnce: Int { inFlight.withLock { $0.most } }

    var all: [ResourceRecord] { records.withLock { $0 } }
    var updateCount: Int { updates.withLock { $0 } }
    /// How many queries of `type` were asked.
    func queryCount(_ type: RecordType) -> Int { queries.withLock { $0[type] ?? 0 } }

    func insert(_ record: ResourceRecord) { records.withLock { $0.append(record) } }

    private static func same(_ a: ResourceRecord, _ b: ResourceRecord) -> Bool {
        a.name.sameName(as: b.name) && a.data == b.data
    }

    func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome {
        updates.withLock { $0 += 1 }
        let outcome = records.withLock { zone -> UpdateOutcome in
            for prerequisite in update.prerequisites {
                switch prerequisite {
                case .nameNotInUse(let name):
                    if zone.contains(where: { $0.name.sameName(as: name) }) { return .prerequisiteFailed }
                case .recordExists(let record):
                    if !zone.contains(where: { Self.same($0, record) }) { return .prerequisiteFailed }
                }
            }
            for change in update.changes {
                switch change {
                case .add(let record):
                    zone.removeAll { Self.same($0, record) }
                    zone.append(record)
                case .deleteRecord(let record):
                    zone.removeAll { Self.same($0, record) }
                case .deleteName(let name):
                    zone.removeAll { $0.name.sameName(as: name) }
                case .deleteRecordSet(let name, let type):
                    zone.removeAll { $0.name.sameName(as: name) && $0.data.type == type }
                }
            }
            return .applied
        }
        if outcome == .applied { serialNumber.withLock { $0 &+= 1 } }
        return outcome
    }

    func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? { serialNumber.withLock { $0 } }

    func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] {
        queries.withLock { $0[type, default: 0] += 1 }
        inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        defer { inFlight.withLock { $0.now -= 1 } }
        if queryTime > .zero {
            do { try await Task.sleep(for: queryTime) } catch { throw UnicastDNSSDError(.cancelled, "the query was cancelled") }
        }
        return records.withLock { zone in
            zone.filter { record in
                guard record.name.sameName(as: name) else { return false }
                switch (record.data, type) {
                case (.pointer, .ptr), (.service, .srv), (.text, .txt), (.address(.v4), .a), (.address(.v6), .aaaa): return true
                default: return false
                }
            }
        }
    }
}
