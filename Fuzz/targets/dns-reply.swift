// Fuzz target: reading DNS answers (UnicastDNSSD), built with Sources/UnicastDNSSD and ldns.
// The bytes are a DNS message from a hostile server: ldns parses it, then LDNSReply reads
// the answer records of every type and the SOA serial, and the browse-domain bounds apply to
// the PTR targets. Properties: no crash; every record read is of the type asked and survives
// being built as an ldns record and read back; a wire name that parses has the same wire
// form again and stays within DNS's limits; no answer gives more domains than the bounds.
import CLDNS

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSReply(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if let name = DNSName(wire: bytes) {
        precondition(name.wire == bytes, "a wire name read back differently")
        precondition(name.wire.count <= DNSName.maximumWireLength, "a name past 255 bytes was accepted")
        _ = name.description
    }
    guard case .success(let packet) = LDNSReply.parse(bytes) else { return 0 }
    defer { ldns_pkt_free(packet) }
    var targets: [DNSName] = []
    for type in RecordType.allCases {
        for record in LDNSReply.records(in: packet, of: type) {
            precondition(record.data.type == type, "a record of another type was returned")
            _ = record.name.description
            guard let rr = LDNSRecords.make(record, LDNSRecords.classIN) else {
                preconditionFailure("a record read from an answer could not be built again")
            }
            defer { ldns_rr_free(rr) }
            precondition(LDNSRecords.read(rr) == record, "a record changed when built and read again")
            if case .pointer(let target) = record.data { targets.append(target) }
        }
    }
    if let question = ldns_pkt_question(packet), ldns_rr_list_rr_count(question) > 0, let rr = ldns_rr_list_rr(question, 0),
       let owner = LDNSRecords.data(ldns_rr_owner(rr)).flatMap(DNSName.init(wire:)) {
        _ = LDNSReply.serial(in: packet, of: owner)
        var enumeration = DomainEnumeration()
        enumeration.add(targets, kind: .browse, startingPoint: owner)
        enumeration.add(targets, kind: .legacyBrowse, startingPoint: owner)
        precondition(enumeration.domains.count <= 2 * DomainEnumeration.maximumDomainsPerAnswer, "more domains than one answer may give")
        precondition(enumeration.domains.allSatisfy { $0.startingPoints.count == 1 }, "one starting point counted twice")
    }
    return 0
}
