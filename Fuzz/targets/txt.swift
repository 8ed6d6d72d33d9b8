// Fuzz target: the TXT record decoder (DiscoveryCore), built with Sources/DiscoveryCore.
// Properties: no crash; a record that decodes re-encodes to bytes that decode to the same
// record; every decoded key follows the key rules.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTXT(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    guard let record = try? TXTRecord(decoding: bytes) else { return 0 }
    for entry in record.entries {
        precondition(TXTRecord.problem(inKey: entry.key) == nil, "decoded an invalid key \(entry.key)")
    }
    let again = try? TXTRecord(decoding: record.encoded())
    precondition(again == record, "round trip changed the record")
    return 0
}
