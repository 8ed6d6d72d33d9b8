import CLDNS
import Dispatch
import Glibc

/// A DNS server reached through ldns: queries with EDNS0 (and TCP when an answer is
/// truncated), updates signed with a TSIG key whose answers' signatures ldns checks.
///
/// Each call makes its own ldns resolver and frees it before returning, so the value holds no
/// C state and is `Sendable`. ldns blocks; the calls run on a global Dispatch queue, never on
/// the caller's task thread, bounded by `timeout` per try.
public struct LDNSServer: UnicastDNSServer {
    /// The EDNS0 UDP payload size offered (the DNS flag day's safe size).
    public static let ednsPayloadSize: UInt16 = 1232

    public let address: IPAddress
    public let port: UInt16
    public let key: TSIGKey?
    /// Seconds to wait for one answer.
    public let timeout: Int

    /// - Parameters:
    ///   - key: signs updates; queries go unsigned. Updates without a key are refused by a
    ///     server that grants updates by key.
    public init(address: IPAddress, port: UInt16 = 53, key: TSIGKey?, timeout: Int = 3) {
        self.address = address
        self.port = port
        self.key = key
        self.timeout = max(1, min(timeout, 60))
    }

    private var serverText: String {
        if case .v6 = address { "[\(address)]:\(port)" } else { "\(address):\(port)" }
    }

    public func update(_ update: DNSUpdate) async throws(UnicastDNSSDError) -> UpdateOutcome {
        try await Self.blocking { () throws(UnicastDNSSDError) -> UpdateOutcome in try self.sendUpdate(update) }
    }

    public func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] {
        try await Self.blocking { () throws(UnicastDNSSDError) -> [ResourceRecord] in try self.sendQuery(name, type) }
    }

    /// Runs blocking ldns work off the cooperative thread pool.
    private static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(UnicastDNSSDError) -> T) async throws(UnicastDNSSDError) -> T {
        let result: Result<T, UnicastDNSSDError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(UnicastDNSSDError) -> T in try work() })
            }
        }
        return try result.get()
    }

    // MARK: - The ldns calls

    private func makeResolver(signed: Bool) throws(UnicastDNSSDError) -> UnsafeMutablePointer<ldns_resolver> {
        guard let resolver = ldns_resolver_new() else { throw UnicastDNSSDError(.server, "ldns could not make a resolver (out of memory)") }
        let nameserver: UnsafeMutablePointer<ldns_rdf>? = switch address {
        case .v4(let bytes): bytes.withUnsafeBytes { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_A, 4, $0.baseAddress) }
        case .v6(let bytes): bytes.withUnsafeBytes { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_AAAA, 16, $0.baseAddress) }
        }
        guard let nameserver, ldns_resolver_push_nameserver(resolver, nameserver) == LDNS_STATUS_OK else {
            if let nameserver { ldns_rdf_deep_free(nameserver) }
            ldns_resolver_deep_free(resolver)
            throw UnicastDNSSDError(.server, "ldns could not take the server address \(address)")
        }
        ldns_rdf_deep_free(nameserver)  // the resolver keeps a copy
        ldns_resolver_set_port(resolver, port)
        ldns_resolver_set_timeout(resolver, timeval(tv_sec: timeout, tv_usec: 0))
        ldns_resolver_set_retry(resolver, 1)
        ldns_resolver_set_retrans(resolver, 1)
        ldns_resolver_set_recursive(resolver, false)
        ldns_resolver_set_igntc(resolver, false)
        ldns_resolver_set_fallback(resolver, true)
        if signed, let key {
            key.name.description.withCString { ldns_resolver_set_tsig_keyname(resolver, $0) }
            (key.algorithm.rawValue + ".").withCString { ldns_resolver_set_tsig_algorithm(resolver, $0) }
            key.secretBase64.withCString { ldns_resolver_set_tsig_keydata(resolver, $0) }
        }
        return resolver
    }

    /// Sends `packet` (owned by the caller) and returns the answer (owned by the caller).
    private func exchange(_ resolver: UnsafeMutablePointer<ldns_resolver>, _ packet: UnsafeMutablePointer<ldns_pkt>, what: String) throws(UnicastDNSSDError) -> UnsafeMutablePointer<ldns_pkt> {
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let started = DispatchTime.now()
        let status = ldns_resolver_send_pkt(&answer, resolver, packet)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        guard status == LDNS_STATUS_OK, let answer else {
            if let answer { ldns_pkt_free(answer) }
            throw mapStatus(status, elapsed: elapsed, what: what)
        }
        guard ldns_pkt_id(answer) == ldns_pkt_id(packet), ldns_pkt_qr(answer) else {
            ldns_pkt_free(answer)
            throw UnicastDNSSDError(.malformedReply, "the answer from the DNS server \(serverText) to \(what) did not match the question; check that \(serverText) is a DNS server")
        }
        return answer
    }

    private func mapStatus(_ status: ldns_status, elapsed: Double, what: String) -> UnicastDNSSDError {
        let raw = String(cString: ldns_get_errorstr_by_id(status))
        switch status {
        case LDNS_STATUS_CRYPTO_TSIG_BOGUS, LDNS_STATUS_CRYPTO_TSIG_ERR:
            return UnicastDNSSDError(.badKey, "the DNS server \(serverText) did not accept the TSIG key \(key.map { "'\($0.name)'" } ?? "") for \(what), or its answer's signature is wrong; check that --tsig-key is the key the zone's update-policy grants", detail: raw)
        case LDNS_STATUS_NETWORK_ERR, LDNS_STATUS_SOCKET_ERROR, LDNS_STATUS_RES_NO_NS, LDNS_STATUS_RES_QUERY:
            if elapsed + 0.2 >= Double(timeout) {
                return UnicastDNSSDError(.timeout, "the DNS server \(serverText) did not answer \(what) within \(timeout) s; check --dns-server and that the server runs and is reachable", detail: raw)
            }
            return UnicastDNSSDError(.unreachable, "cannot reach the DNS server \(serverText) for \(what); check --dns-server, the route to it, and that it listens on port \(port)", detail: raw)
        default:
            return UnicastDNSSDError(.server, "\(what) at the DNS server \(serverText) failed", detail: raw)
        }
    }

    /// Turns a non-NOERROR rcode into the error that explains it (YXDOMAIN and NXRRSET are
    /// failed prerequisites and handled by the caller).
    private func rcodeError(_ rcode: ldns_pkt_rcode, zone: DNSName, what: String) -> UnicastDNSSDError {
        let name = ldns_pkt_rcode2str(rcode).map { pointer -> String in defer { free(pointer) }; return String(cString: pointer) } ?? "rcode \(rcode.rawValue)"
        switch rcode {
        case LDNS_RCODE_REFUSED:
            return UnicastDNSSDError(.refused, "the DNS server \(serverText) refused \(what) in \(zone); the key must be granted by the zone's update-policy (ask the zone's administrator)", detail: name)
        case LDNS_RCODE_NOTAUTH, LDNS_RCODE_NOTZONE:
            return UnicastDNSSDError(.noSuchZone, "the DNS server \(serverText) does not serve the zone \(zone); check --domain and --dns-server", detail: name)
        default:
            return UnicastDNSSDError(.server, "the DNS server \(serverText) answered \(what) in \(zone) with an error", detail: name)
        }
    }

    private func sendUpdate(_ update: DNSUpdate) throws(UnicastDNSSDError) -> UpdateOutcome {
        let resolver = try makeResolver(signed: true)
        defer { ldns_resolver_deep_free(resolver) }
        guard let prerequisites = ldns_rr_list_new(), let changes = ldns_rr_list_new() else {
            throw UnicastDNSSDError(.server, "ldns could not make a record list (out of memory)")
        }
        defer { ldns_rr_list_deep_free(prerequisites); ldns_rr_list_deep_free(changes) }
        for prerequisite in update.prerequisites {
            let rr: UnsafeMutablePointer<ldns_rr>? = switch prerequisite {
            case .nameNotInUse(let name): LDNSRecords.bare(name, .any, LDNSRecords.classNone, ttl: 0)
            case .recordExists(let record): LDNSRecords.make(record, LDNSRecords.classIN, ttl: 0)
            }
            try push(rr, prerequisites)
        }
        for change in update.changes {
            let rr: UnsafeMutablePointer<ldns_rr>? = switch change {
            case .add(let record): LDNSRecords.make(record, LDNSRecords.classIN)
            case .deleteRecord(let record): LDNSRecords.make(record, LDNSRecords.classNone, ttl: 0)
            case .deleteName(let name): LDNSRecords.bare(name, .any, LDNSRecords.classAny, ttl: 0)
            }
            try push(rr, changes)
        }
        // The packet takes the zone rdf and copies the lists.
        guard let zone = LDNSRecords.nameRDF(update.zone) else { throw UnicastDNSSDError(.server, "ldns could not hold the zone name") }
        guard let packet = ldns_update_pkt_new(zone, LDNS_RR_CLASS_IN, prerequisites, changes, nil) else {
            ldns_rdf_deep_free(zone)
            throw UnicastDNSSDError(.server, "ldns could not build the update for \(update.zone)")
        }
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_id(packet, UInt16.random(in: 0...UInt16.max))
        if key != nil {
            let status = ldns_update_pkt_tsig_add(packet, resolver)
            guard status == LDNS_STATUS_OK else {
                throw UnicastDNSSDError(.badKey, "ldns could not sign the update with the TSIG key '\(key.map { "\($0.name)" } ?? "")'; check the key file", detail: String(cString: ldns_get_errorstr_by_id(status)))
            }
        }
        let what = "the update"
        let answer = try exchange(resolver, packet, what: what)
        defer { ldns_pkt_free(answer) }
        let rcode = ldns_pkt_get_rcode(answer)
        switch rcode {
        case LDNS_RCODE_NOERROR: return .applied
        case LDNS_RCODE_YXDOMAIN, LDNS_RCODE_NXRRSET, LDNS_RCODE_YXRRSET, LDNS_RCODE_NXDOMAIN: return .prerequisiteFailed
        default: throw rcodeError(rcode, zone: update.zone, what: what)
        }
    }

    public func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? {
        try await Self.blocking { () throws(UnicastDNSSDError) -> UInt32? in try self.sendSerialQuery(zone) }
    }

    private func sendSerialQuery(_ zone: DNSName) throws(UnicastDNSSDError) -> UInt32? {
        let answer = try ask(zone, .soa)
        defer { ldns_pkt_free(answer) }
        guard ldns_pkt_get_rcode(answer) == LDNS_RCODE_NOERROR else {
            throw UnicastDNSSDError(.noSuchZone, "the DNS server \(serverText) does not serve the zone \(zone); check --domain and the DNS server",
                                    detail: ldns_pkt_rcode2str(ldns_pkt_get_rcode(answer)).map { pointer -> String in defer { free(pointer) }; return String(cString: pointer) })
        }
        guard let list = ldns_pkt_answer(answer) else { return nil }
        for index in 0..<ldns_rr_list_rr_count(list) {
            // SOA data: MNAME, RNAME, SERIAL (32 bits), REFRESH, RETRY, EXPIRE, MINIMUM.
            guard let rr = ldns_rr_list_rr(list, index), ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA, ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN,
                  let ownerBytes = LDNSRecords.data(ldns_rr_owner(rr)), let owner = DNSName(wire: ownerBytes), owner.sameName(as: zone),
                  ldns_rr_rd_count(rr) == 7, let serial = LDNSRecords.data(ldns_rr_rdf(rr, 2)), serial.count == 4 else { continue }
            return serial.reduce(0) { $0 << 8 | UInt32($1) }
        }
        return nil
    }

    private func push(_ rr: UnsafeMutablePointer<ldns_rr>?, _ list: UnsafeMutablePointer<ldns_rr_list>) throws(UnicastDNSSDError) {
        guard let rr else { throw UnicastDNSSDError(.server, "ldns could not build a record (out of memory)") }
        guard ldns_rr_list_push_rr(list, rr) else {
            ldns_rr_free(rr)
            throw UnicastDNSSDError(.server, "ldns could not add a record to the update (out of memory)")
        }
    }

    /// Sends an unsigned query with EDNS0 (TCP when the answer comes truncated) and returns
    /// the whole answer, owned by the caller (`ldns_pkt_free`).
    private func ask(_ name: DNSName, _ type: RecordType) throws(UnicastDNSSDError) -> UnsafeMutablePointer<ldns_pkt> {
        let resolver = try makeResolver(signed: false)
        defer { ldns_resolver_deep_free(resolver) }
        guard let question = LDNSRecords.nameRDF(name) else { throw UnicastDNSSDError(.server, "ldns could not hold the name \(name)") }
        // The packet takes the question's name.
        guard let packet = ldns_pkt_query_new(question, ldns_rr_type(UInt32(type.rawValue)), LDNS_RR_CLASS_IN, 0) else {
            ldns_rdf_deep_free(question)
            throw UnicastDNSSDError(.server, "ldns could not build the query for \(name)")
        }
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_id(packet, UInt16.random(in: 0...UInt16.max))
        ldns_pkt_set_edns_udp_size(packet, Self.ednsPayloadSize)
        let what = "the query for \(name)"
        let answer = try exchange(resolver, packet, what: what)
        guard !ldns_pkt_tc(answer) else {
            ldns_pkt_free(answer)
            throw UnicastDNSSDError(.malformedReply, "the answer to \(what) was cut short even over TCP; the DNS server \(serverText) must answer over TCP")
        }
        return answer
    }

    private func sendQuery(_ name: DNSName, _ type: RecordType) throws(UnicastDNSSDError) -> [ResourceRecord] {
        let answer = try ask(name, type)
        defer { ldns_pkt_free(answer) }
        let what = "the query for \(name)"
        let rcode = ldns_pkt_get_rcode(answer)
        switch rcode {
        case LDNS_RCODE_NOERROR, LDNS_RCODE_NXDOMAIN: break
        case LDNS_RCODE_REFUSED, LDNS_RCODE_NOTAUTH:
            // A server that is not authoritative for a name and does not recurse refuses it.
            let code = ldns_pkt_rcode2str(rcode).map { pointer -> String in defer { free(pointer) }; return String(cString: pointer) }
            throw UnicastDNSSDError(.noSuchZone, "the DNS server \(serverText) does not answer for \(name): it serves no zone that holds it; check --domain and the DNS server", detail: code)
        default: throw rcodeError(rcode, zone: name, what: what)
        }
        guard let list = ldns_pkt_answer(answer) else { return [] }
        let count = ldns_rr_list_rr_count(list)
        var records: [ResourceRecord] = []
        for index in 0..<count {
            guard let rr = ldns_rr_list_rr(list, index), let record = LDNSRecords.read(rr),
                  LDNSRecords.type(of: record.data) == type else { continue }
            records.append(record)
        }
        return records
    }
}
