import CLDNS

/// Conversions between this module's records and ldns's, in one place. Every `ldns_rr` made
/// here belongs to the caller (free it with `ldns_rr_free` or hand it to a list).
enum LDNSRecords {
    /// RFC 2136 classes for prerequisites and deletions.
    static let classIN = LDNS_RR_CLASS_IN
    static let classNone = LDNS_RR_CLASS_NONE
    static let classAny = LDNS_RR_CLASS_ANY

    /// A name as an ldns DNAME rdf (wire form), or nil when ldns cannot allocate it.
    static func nameRDF(_ name: DNSName) -> UnsafeMutablePointer<ldns_rdf>? {
        let wire = name.wire
        return wire.withUnsafeBytes { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, wire.count, $0.baseAddress) }
    }

    /// An rr with owner, type, class and TTL and no data yet.
    static func bare(_ name: DNSName, _ type: RecordType, _ rrClass: ldns_rr_class, ttl: UInt32) -> UnsafeMutablePointer<ldns_rr>? {
        guard let rr = ldns_rr_new() else { return nil }
        guard let owner = nameRDF(name) else { ldns_rr_free(rr); return nil }
        ldns_rr_set_owner(rr, owner)
        ldns_rr_set_type(rr, ldns_rr_type(UInt32(type.rawValue)))
        ldns_rr_set_class(rr, rrClass)
        ldns_rr_set_ttl(rr, ttl)
        return rr
    }

    /// The rr for `record` in class `rrClass` (IN to add, NONE to delete one record, IN with
    /// TTL 0 for a value-dependent prerequisite).
    static func make(_ record: ResourceRecord, _ rrClass: ldns_rr_class, ttl: UInt32? = nil) -> UnsafeMutablePointer<ldns_rr>? {
        guard let rr = bare(record.name, type(of: record.data), rrClass, ttl: ttl ?? record.ttl) else { return nil }
        for field in fields(of: record.data) {
            guard let field, ldns_rr_push_rdf(rr, field) else {
                if let field { ldns_rdf_deep_free(field) }
                ldns_rr_free(rr)
                return nil
            }
        }
        return rr
    }

    static func type(of data: RecordData) -> RecordType { data.type }

    private static func fields(of data: RecordData) -> [UnsafeMutablePointer<ldns_rdf>?] {
        func bytes(_ type: ldns_rdf_type, _ value: [UInt8]) -> UnsafeMutablePointer<ldns_rdf>? {
            value.withUnsafeBytes { ldns_rdf_new_frm_data(type, value.count, $0.baseAddress) }
        }
        switch data {
        case .pointer(let target):
            return [nameRDF(target)]
        case .service(let priority, let weight, let port, let target):
            return [ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, priority), ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, weight),
                    ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, port), nameRDF(target)]
        case .text(let strings):
            // ServiceInstance bounds each string to 255 bytes; a longer one cannot be sent.
            return strings.map { $0.count <= 255 ? bytes(LDNS_RDF_TYPE_STR, [UInt8($0.count)] + $0) : nil }
        case .address(.v4(let address)):
            return [address.count == 4 ? bytes(LDNS_RDF_TYPE_A, address) : nil]
        case .address(.v6(let address)):
            return [address.count == 16 ? bytes(LDNS_RDF_TYPE_AAAA, address) : nil]
        }
    }

    /// The bytes of an rdf (bounded by the rdf's own size, which ldns took from a parsed packet).
    static func data(_ rdf: UnsafePointer<ldns_rdf>?) -> [UInt8]? {
        guard let rdf, let start = ldns_rdf_data(rdf) else { return nil }
        let size = ldns_rdf_size(rdf)
        guard size <= 65535 else { return nil }
        return Array(UnsafeBufferPointer(start: start, count: size))
    }

    /// Reads one answer rr as a record of the types this module knows; nil for any other type,
    /// class or a field that breaks its format (hostile answers are skipped, not trusted).
    static func read(_ rr: UnsafePointer<ldns_rr>) -> ResourceRecord? {
        guard ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN,
              let ownerBytes = data(ldns_rr_owner(rr)), let owner = DNSName(wire: ownerBytes),
              let type = RecordType(rawValue: UInt16(truncatingIfNeeded: ldns_rr_get_type(rr).rawValue)) else { return nil }
        let count = ldns_rr_rd_count(rr)
        guard count <= 512 else { return nil }
        let fields = (0..<count).map { data(ldns_rr_rdf(rr, $0)) }
        guard fields.allSatisfy({ $0 != nil }) else { return nil }
        let values = fields.compactMap { $0 }
        func uint16(_ bytes: [UInt8]) -> UInt16? { bytes.count == 2 ? UInt16(bytes[0]) << 8 | UInt16(bytes[1]) : nil }
        let recordData: RecordData
        switch type {
        case .ptr:
            guard values.count == 1, let target = DNSName(wire: values[0]) else { return nil }
            recordData = .pointer(target)
        case .srv:
            guard values.count == 4, let priority = uint16(values[0]), let weight = uint16(values[1]), let port = uint16(values[2]),
                  let target = DNSName(wire: values[3]) else { return nil }
            recordData = .service(priority: priority, weight: weight, port: port, target: target)
        case .txt:
            var strings: [[UInt8]] = []
            for value in values {
                guard let length = value.first, Int(length) == value.count - 1 else { return nil }
                strings.append(Array(value.dropFirst()))
            }
            recordData = .text(strings)
        case .a:
            guard values.count == 1, values[0].count == 4 else { return nil }
            recordData = .address(.v4(values[0]))
        case .aaaa:
            guard values.count == 1, values[0].count == 16 else { return nil }
            recordData = .address(.v6(values[0]))
        case .soa, .any:
            return nil
        }
        return ResourceRecord(name: owner, ttl: ldns_rr_ttl(rr), data: recordData)
    }
}
