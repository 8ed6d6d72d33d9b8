import CLDNS
import Dispatch
import Glibc

/// A DNS server reached through ldns: queries with EDNS0 (and TCP when an answer is
/// truncated), updates signed with a TSIG key whose answers' signatures ldns checks.
///
/// ldns builds, signs, parses and verifies the messages; the sockets are our own
/// (`DNSSocketExchange`): a connected UDP socket, one deadline of `timeout` seconds for a
/// whole exchange (TCP included), datagrams that are not the answer ignored. The value holds
/// no C state and is `Sendable`; the blocking exchange runs on a global Dispatch queue and
/// ends at once when the calling task is cancelled.
public struct LDNSServer: UnicastDNSServer {
    /// The EDNS0 UDP payload size offered (the DNS flag day's safe size).
    public static let ednsPayloadSize: UInt16 = 1232

    public let address: IPAddress
    public let port: UInt16
    public let key: TSIGKey?
    /// Seconds one whole exchange may take (UDP, then TCP when the answer is truncated).
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
        try await Self.blocking { (cancel) throws(UnicastDNSSDError) -> UpdateOutcome in try self.sendUpdate(update, cancel: cancel) }
    }

    public func query(_ name: DNSName, _ type: RecordType) async throws(UnicastDNSSDError) -> [ResourceRecord] {
        try await Self.blocking { (cancel) throws(UnicastDNSSDError) -> [ResourceRecord] in try self.sendQuery(name, type, cancel: cancel) }
    }

    /// Runs a blocking exchange on a Dispatch thread of its own, off the cooperative pool;
    /// cancelling the task makes the exchange's poll return at once (SIGINT ends the tools by
    /// cancelling).
    ///
    /// Not on `DispatchQueue.global()`: on Linux its threads are the ones Swift's cooperative
    /// pool runs on, as many as there are CPUs, so two exchanges waiting on a server that does
    /// not answer stopped every task of a 2-CPU host for their whole deadline. A serial queue
    /// of its own runs on libdispatch's overcommitting pool, which adds a thread when the
    /// others block.
    private static func blocking<T: Sendable>(_ work: @escaping @Sendable (Int32) throws(UnicastDNSSDError) -> T) async throws(UnicastDNSSDError) -> T {
        guard let cancel = CancelPipe() else { throw UnicastDNSSDError(.server, "cannot make a pipe (out of file descriptors); close other programs and try again") }
        if Task.isCancelled { throw cancelledError }
        let result: Result<T, UnicastDNSSDError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue(label: "svc.dns-exchange").async {
                    continuation.resume(returning: Result { () throws(UnicastDNSSDError) -> T in try work(cancel.readEnd) })
                }
            }
        } onCancel: {
            cancel.fire()
        }
        return try result.get()
    }

    private static var cancelledError: UnicastDNSSDError {
        UnicastDNSSDError(.cancelled, "the DNS exchange was cancelled")
    }

    // MARK: - The exchange

    /// Signs `packet` with the key (HMAC over the whole message, fudge 300 s as ldns does).
    private func sign(_ packet: UnsafeMutablePointer<ldns_pkt>, key: TSIGKey) throws(UnicastDNSSDError) {
        let status = key.name.description.withCString { name in
            key.secretBase64.withCString { secret in
                (key.algorithm.rawValue + ".").withCString { algorithm in
                    ldns_pkt_tsig_sign(packet, name, secret, 300, algorithm, nil)
                }
            }
        }
        guard status == LDNS_STATUS_OK else {
            throw UnicastDNSSDError(.badKey, "ldns could not sign the update with the TSIG key '\(key.name)'; check the key file", detail: LDNSStatus(status: status).description)
        }
    }

    /// Whether `answer`'s question section is `packet`'s: the same names (case aside), types
    /// and classes, in order.
    private static func sameQuestion(_ answer: UnsafeMutablePointer<ldns_pkt>, _ packet: UnsafeMutablePointer<ldns_pkt>) -> Bool {
        guard let asked = ldns_pkt_question(packet), let echoed = ldns_pkt_question(answer),
              ldns_rr_list_rr_count(asked) == ldns_rr_list_rr_count(echoed) else { return false }
        for index in 0..<ldns_rr_list_rr_count(asked) {
            guard let one = ldns_rr_list_rr(asked, index), let other = ldns_rr_list_rr(echoed, index),
                  ldns_rr_get_type(one) == ldns_rr_get_type(other), ldns_rr_get_class(one) == ldns_rr_get_class(other),
                  let oneName = ldns_rr_owner(one), let otherName = ldns_rr_owner(other),
                  ldns_dname_compare(oneName, otherName) == 0 else { return false }
        }
        return true
    }

    /// Sends `packet` (owned by the caller) and returns the answer (owned by the caller): one
    /// deadline (`timeout` seconds) for the whole exchange, UDP then TCP. Datagrams with
    /// another id or question, and answers to a signed update whose signature does not verify,
    /// are ignored (anyone can send a datagram); the genuine answer is awaited.
    private func exchange(_ packet: UnsafeMutablePointer<ldns_pkt>, signedWith key: TSIGKey?, what: String, cancel: Int32) throws(UnicastDNSSDError) -> UnsafeMutablePointer<ldns_pkt> {
        var wirePointer: UnsafeMutablePointer<UInt8>?
        var wireSize = 0
        let status = ldns_pkt2wire(&wirePointer, packet, &wireSize)
        guard status == LDNS_STATUS_OK, let wirePointer else {
            free(wirePointer)
            throw UnicastDNSSDError(.server, "ldns could not write \(what) as a DNS message", detail: LDNSStatus(status: status).description)
        }
        let query = Array(UnsafeBufferPointer(start: wirePointer, count: wireSize))
        free(wirePointer)
        let mac = key == nil ? nil : ldns_pkt_tsig(packet).flatMap { ldns_rr_rdf($0, 3) }
        let keyName = key?.name.description ?? ""
        let secret = key?.secretBase64 ?? ""
        let judge = { (bytes: [UInt8]) -> DNSSocketExchange.Verdict in
            guard case .success(let answer) = LDNSReply.parse(bytes) else { return .foreign }
            defer { ldns_pkt_free(answer) }
            guard ldns_pkt_qr(answer), ldns_pkt_id(answer) == ldns_pkt_id(packet), Self.sameQuestion(answer, packet) else { return .foreign }
            guard let mac else { return .accept }
            let verified = bytes.withUnsafeBufferPointer { wire in
                keyName.withCString { name in secret.withCString { ldns_pkt_tsig_verify(answer, wire.baseAddress, wire.count, name, $0, mac) } }
            }
            return verified ? .accept : .unsigned
        }
        let truncated = { (bytes: [UInt8]) -> Bool in bytes.count > 2 && bytes[2] & 0x02 != 0 }
        let socketExchange = DNSSocketExchange(address: address, port: port,
                                               deadline: DispatchTime.now().uptimeNanoseconds + UInt64(timeout) * 1_000_000_000, cancel: cancel)
        let reply: [UInt8]
        do throws(DNSSocketExchange.Failure) {
            reply = try socketExchange.run(query, judge: judge, truncated: truncated)
        } catch {
            throw describe(error, what: what)
        }
        switch LDNSReply.parse(reply) {
        case .success(let answer): return answer
        case .failure(let status):
            throw UnicastDNSSDError(.malformedReply, "the answer from the DNS server \(serverText) to \(what) is not a valid DNS message", detail: status.description)
        }
    }

    private func describe(_ failure: DNSSocketExchange.Failure, what: String) -> UnicastDNSSDError {
        switch failure {
        case .cancelled:
            return Self.cancelledError
        case .timedOut(let sawUnsigned) where sawUnsigned:
            let keyName = key.map { "'\($0.name)'" } ?? ""
            return UnicastDNSSDError(.badKey, "the DNS server \(serverText) did not accept the TSIG key \(keyName) for \(what), or someone forged its answers: no answer signed with that key came within \(timeout) s; "
                                     + "check that --tsig-key is the key the zone's update-policy grants")
        case .timedOut:
            return UnicastDNSSDError(.timeout, "the DNS server \(serverText) did not answer \(what) within \(timeout) s; check --dns-server and that the server runs and is reachable")
        case .refused(let why):
            return UnicastDNSSDError(.connectionRefused, "cannot reach the DNS server \(serverText) for \(what); check --dns-server, the route to it, and that it listens on port \(port)", detail: why)
        case .system(let why):
            return UnicastDNSSDError(.unreachable, "cannot reach the DNS server \(serverText) for \(what); check --dns-server and the route to it", detail: why)
        case .mismatch(.unsigned):
            return UnicastDNSSDError(.badKey, "the DNS server \(serverText) did not accept the TSIG key \(key.map { "'\($0.name)'" } ?? "") for \(what): its answer over TCP is not signed with it; check that --tsig-key is the key the zone's update-policy grants")
        case .mismatch:
            return UnicastDNSSDError(.malformedReply, "the answer from the DNS server \(serverText) to \(what) did not match the question; check that \(serverText) is a DNS server")
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

    private func sendUpdate(_ update: DNSUpdate, cancel: Int32) throws(UnicastDNSSDError) -> UpdateOutcome {
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
            case .deleteRecordSet(let name, let type): LDNSRecords.bare(name, type, LDNSRecords.classAny, ttl: 0)
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
        if let key { try sign(packet, key: key) }
        let what = "the update"
        let answer = try exchange(packet, signedWith: key, what: what, cancel: cancel)
        defer { ldns_pkt_free(answer) }
        let rcode = ldns_pkt_get_rcode(answer)
        switch rcode {
        case LDNS_RCODE_NOERROR: return .applied
        case LDNS_RCODE_YXDOMAIN, LDNS_RCODE_NXRRSET, LDNS_RCODE_YXRRSET, LDNS_RCODE_NXDOMAIN: return .prerequisiteFailed
        default: throw rcodeError(rcode, zone: update.zone, what: what)
        }
    }

    public func serial(of zone: DNSName) async throws(UnicastDNSSDError) -> UInt32? {
        try await Self.blocking { (cancel) throws(UnicastDNSSDError) -> UInt32? in try self.sendSerialQuery(zone, cancel: cancel) }
    }

    private func sendSerialQuery(_ zone: DNSName, cancel: Int32) throws(UnicastDNSSDError) -> UInt32? {
        let answer = try ask(zone, .soa, cancel: cancel)
        defer { ldns_pkt_free(answer) }
        guard ldns_pkt_get_rcode(answer) == LDNS_RCODE_NOERROR else {
            throw UnicastDNSSDError(.noSuchZone, "the DNS server \(serverText) does not serve the zone \(zone); check --domain and the DNS server",
                                    detail: ldns_pkt_rcode2str(ldns_pkt_get_rcode(answer)).map { pointer -> String in defer { free(pointer) }; return String(cString: pointer) })
        }
        return LDNSReply.serial(in: answer, of: zone)
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
    private func ask(_ name: DNSName, _ type: RecordType, cancel: Int32) throws(UnicastDNSSDError) -> UnsafeMutablePointer<ldns_pkt> {
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
        let answer = try exchange(packet, signedWith: nil, what: what, cancel: cancel)
        guard !ldns_pkt_tc(answer) else {
            ldns_pkt_free(answer)
            throw UnicastDNSSDError(.malformedReply, "the answer to \(what) was cut short even over TCP; the DNS server \(serverText) must answer over TCP")
        }
        return answer
    }

    private func sendQuery(_ name: DNSName, _ type: RecordType, cancel: Int32) throws(UnicastDNSSDError) -> [ResourceRecord] {
        let answer = try ask(name, type, cancel: cancel)
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
        return LDNSReply.records(in: answer, of: type)
    }
}
