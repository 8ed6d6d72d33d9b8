/// Hex test data as written in draft-irtf-cfrg-cpace (lines may be split with spaces).
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }.utf8.map { byte -> UInt8 in
        switch byte {
        case 0x30 ... 0x39: byte - 0x30
        case 0x61 ... 0x66: byte - 0x61 + 10
        case 0x41 ... 0x46: byte - 0x41 + 10
        default: 0xff
        }
    }
    precondition(digits.count % 2 == 0 && !digits.contains(0xff), "bad hex in a test")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}
