import CLDNS

/// Reading a DNS answer, in one place: the bytes parsed by ldns, then the answer section's
/// records of one type and the zone's SOA serial, every field checked (hostile answers are
/// skipped, not trusted). `Fuzz/targets/dns-reply.swift` feeds it arbitrary bytes.
enum LDNSReply {
    /// The message in `bytes` as an ldns packet owned by the caller (`ldns_pkt_free`), or
    /// nil with ldns's status when it is not a DNS message.
    static func parse(_ bytes: [UInt8]) -> Result<UnsafeMutablePointer<ldns_pkt>, LDNSStatus> {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = bytes.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else {
            if let parsed { ldns_pkt_free(parsed) }
            return .failure(LDNSStatus(status: status))
        }
        return .success(packet)
    }

    /// The answer section's records of `type` in class IN, in order; records of other types
    /// and records that break their type's format are left out.
    static func records(in answer: UnsafeMutablePointer<ldns_pkt>, of type: RecordType) -> [ResourceRecord] {
        guard let list = ldns_pkt_answer(answer) else { return [] }
        var records: [ResourceRecord] = []
        for index in 0..<ldns_rr_list_rr_count(list) {
            guard let rr = ldns_rr_list_rr(list, index), let record = LDNSRecords.read(rr), record.data.type == type else { continue }
            records.append(record)
        }
        return records
    }

    /// The serial of `zone`'s SOA in the answer section (SOA data: MNAME, RNAME, SERIAL of 32
    /// bits, REFRESH, RETRY, EXPIRE, MINIMUM), or nil when there is none that is well formed.
    static func serial(in answer: UnsafeMutablePointer<ldns_pkt>, of zone: DNSName) -> UInt32? {
        guard let list = ldns_pkt_answer(answer) else { return nil }
        for index in 0..<ldns_rr_list_rr_count(list) {
            guard let rr = ldns_rr_list_rr(list, index), ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA, ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN,
                  let ownerBytes = LDNSRecords.data(ldns_rr_owner(rr)), let owner = DNSName(wire: ownerBytes), owner.sameName(as: zone),
                  ldns_rr_rd_count(rr) == 7, let serial = LDNSRecords.data(ldns_rr_rdf(rr, 2)), serial.count == 4 else { continue }
            return serial.reduce(0) { $0 << 8 | UInt32($1) }
        }
        return nil
    }
}

/// An ldns status that is not OK, with ldns's text for it.
struct LDNSStatus: Error, CustomStringConvertible {
    let status: ldns_status

    var description: String {
        guard let text = ldns_get_errorstr_by_id(status) else { return "ldns status \(status.rawValue)" }
        return String(cString: text)
    }
}
