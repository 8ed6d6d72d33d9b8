/// Look-alike characters, for `MemberName.comparisonKey`: the Latin, Greek and Cyrillic
/// letters that render like a Latin letter, the digits and symbols that render like `l` and
/// `o`, dashes, quotes and dots, and the letter pairs that render like one letter (`rn`, `vv`).
///
/// Not a full implementation of Unicode's confusables (UTS #39): it covers the scripts whose
/// letters are shared shapes, which is where a name can pass for another in a terminal font.
/// Letters outside this table are compared as themselves after case folding.
enum Confusables {
    /// Fullwidth ASCII (U+FF01 to U+FF5E) as the ASCII it stands for; any other scalar as it is.
    static func fullwidthAsASCII(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        guard (0xFF01...0xFF5E).contains(scalar.value) else { return scalar }
        return Unicode.Scalar(UInt8(scalar.value - 0xFEE0))
    }

    /// The one character that stands for every character that looks like `scalar`.
    static func representative(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        if let latin = lookAlikes[scalar.value] { return latin }
        switch scalar.properties.generalCategory {
        case .dashPunctuation: return "-"
        default: return scalar
        }
    }

    /// `text` with letter pairs that render as one letter replaced by it (`rn` → `m`, `vv` → `w`).
    static func mergingLookAlikeSequences(_ text: String) -> String {
        guard text.contains("rn") || text.contains("vv") else { return text }
        var result = ""
        var pending: Character?
        for character in text {
            switch (pending, character) {
            case ("r", "n"): result.append("m"); pending = nil
            case ("v", "v"): result.append("w"); pending = nil
            default:
                if let pending { result.append(pending) }
                pending = character
            }
        }
        if let pending { result.append(pending) }
        return result
    }

    /// Code point → the Latin letter (or ASCII sign) it renders like. Upper and lower case
    /// are listed apart because a Greek or Cyrillic letter often looks Latin in one case only.
    private static let lookAlikes: [UInt32: Unicode.Scalar] = [
        // Latin and ASCII shapes of l and o
        0x0049: "l", 0x0069: "l", 0x0031: "l", 0x007C: "l", 0x0131: "l", 0x01C0: "l",
        0x0030: "o", 0x004F: "o",
        // Greek capitals
        0x0391: "A", 0x0392: "B", 0x0395: "E", 0x0396: "Z", 0x0397: "H", 0x0399: "l", 0x039A: "K",
        0x039C: "M", 0x039D: "N", 0x039F: "o", 0x03A1: "P", 0x03A4: "T", 0x03A5: "Y", 0x03A7: "X",
        0x03F9: "C", 0x037F: "J",
        // Greek small letters
        0x03B1: "a", 0x03B3: "y", 0x03B9: "l", 0x03BA: "k", 0x03BD: "v", 0x03BF: "o", 0x03C1: "p",
        0x03C5: "u", 0x03C7: "x", 0x03F2: "c", 0x03F3: "j",
        // Cyrillic capitals
        0x0405: "S", 0x0406: "l", 0x0408: "J", 0x0410: "A", 0x0412: "B", 0x0415: "E", 0x041A: "K",
        0x041C: "M", 0x041D: "H", 0x041E: "o", 0x0420: "P", 0x0421: "C", 0x0422: "T", 0x0423: "Y",
        0x0425: "X", 0x04AE: "Y", 0x04BA: "H", 0x04C0: "l", 0x0500: "D", 0x051A: "Q", 0x051C: "W",
        // Cyrillic small letters
        0x0430: "a", 0x0435: "e", 0x043E: "o", 0x0440: "p", 0x0441: "c", 0x0443: "y", 0x0445: "x",
        0x0455: "s", 0x0456: "l", 0x0458: "j", 0x04AF: "y", 0x04BB: "h", 0x04CF: "l", 0x0501: "d",
        0x051B: "q", 0x051D: "w", 0x0475: "v",
        // signs
        0x2212: "-", 0x2018: "'", 0x2019: "'", 0x02BC: "'", 0x00B7: ".", 0x2027: ".",
    ]
}
