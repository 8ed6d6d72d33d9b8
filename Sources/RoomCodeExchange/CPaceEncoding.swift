/// The string functions of draft-irtf-cfrg-cpace-21 (§6.3, Appendix A): LEB128 length prefixes,
/// `prepend_len`, `lv_cat`, `generator_string` and `transcript_ir`. Pure.
enum CPaceEncoding {
    /// The LEB128 encoding of `length`: 7 bits a byte, least significant first, bit 7 set while
    /// more follow (one byte below 128).
    static func leb128(_ length: Int) -> [UInt8] {
        var remaining = UInt(max(0, length))
        var encoded: [UInt8] = []
        repeat {
            let low = UInt8(remaining & 0x7f)
            remaining >>= 7
            encoded.append(remaining == 0 ? low : low | 0x80)
        } while remaining != 0
        return encoded
    }

    /// `prepend_len(data)`: the LEB128 length of `data`, then `data`.
    static func prependLength(_ data: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        appendLengthValue(data, to: &result)
        return result
    }

    /// Appends `prepend_len(data)` to `output` without an intermediate copy of `data`.
    static func appendLengthValue(_ data: [UInt8], to output: inout [UInt8]) {
        output.append(contentsOf: leb128(data.count))
        output.append(contentsOf: data)
    }

    /// `lv_cat(parts...)`: `prepend_len` of each part, concatenated.
    static func lvCat(_ parts: [UInt8]...) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(parts.reduce(0) { $0 + $1.count + 3 })
        for part in parts { appendLengthValue(part, to: &result) }
        return result
    }

    /// `generator_string(DSI, PRS, CI, sid, s_in_bytes)` (Appendix A.2):
    /// `lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid)` with
    /// `len_zpad = max(0, s_in_bytes - 1 - len(prepend_len(PRS)) - len(prepend_len(DSI)))`,
    /// so that DSI, PRS and the padding fill the hash's first input block.
    ///
    /// - Important: The result holds the password: wipe it after hashing.
    static func generatorString(dsi: [UInt8], prs: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8],
                                hashBlockLength: Int) -> [UInt8] {
        let prsPrefixed = leb128(prs.count).count + prs.count
        let dsiPrefixed = leb128(dsi.count).count + dsi.count
        let zeroPadding = max(0, hashBlockLength - 1 - prsPrefixed - dsiPrefixed)
        var result: [UInt8] = []
        result.reserveCapacity(dsiPrefixed + prsPrefixed + zeroPadding + channelIdentifier.count + sessionID.count + 16)
        appendLengthValue(dsi, to: &result)
        appendLengthValue(prs, to: &result)
        appendLengthValue([UInt8](repeating: 0, count: zeroPadding), to: &result)
        appendLengthValue(channelIdentifier, to: &result)
        appendLengthValue(sessionID, to: &result)
        return result
    }

    /// `transcript_ir(Ya, ADa, Yb, ADb) = lv_cat(Ya, ADa) || lv_cat(Yb, ADb)` (Appendix A.3.4):
    /// the initiator's share and data first, always.
    static func transcriptIR(initiatorShare: [UInt8], initiatorData: [UInt8],
                             responderShare: [UInt8], responderData: [UInt8]) -> [UInt8] {
        lvCat(initiatorShare, initiatorData) + lvCat(responderShare, responderData)
    }
}
