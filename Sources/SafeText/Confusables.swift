/// Look-alike characters, for `MemberName.comparisonKey`: the letters that render like a
/// Latin letter (Latin IPA and small capitals, Greek, Cyrillic, Armenian, Cherokee, Lisu,
/// Canadian Syllabics, Coptic), the digits and symbols that render like `l` and `o` (Indic,
/// Thai, Lao, Myanmar and Khmer zeros among them), dashes, quotes and dots, and the letter
/// pairs that render like one letter (`rn`, `vv`).
///
/// Not a full implementation of Unicode's confusables (UTS #39): a hand-picked list of the
/// shapes a name in one script can borrow to pass for a Latin name in a terminal font
/// (a name that mixes scripts is refused by `MemberName` before this matters). Letters
/// outside this table are compared as themselves after case folding.
enum Confusables {
    /// Fullwidth ASCII (U+FF01 to U+FF5E) as the ASCII it stands for; any other scalar as it is.
    static func fullwidthAsASCII(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        guard (0xFF01...0xFF5E).contains(scalar.value) else { return scalar }
        return Unicode.Scalar(UInt8(scalar.value - 0xFEE0))
    }

    /// The one character that stands for every character that looks like `scalar`.
    static func representative(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        if let latin = lookAlikes[cherokeeCapital(of: scalar).value] { return latin }
        switch scalar.properties.generalCategory {
        case .dashPunctuation: return "-"
        default: return scalar
        }
    }

    /// The Cherokee capital letter of a Cherokee small letter (U+AB70 to U+ABBF, U+13F8 to
    /// U+13FD), so the table lists each Cherokee letter once; any other scalar as it is.
    static func cherokeeCapital(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar.value {
        case 0xAB70...0xABBF: Unicode.Scalar(scalar.value - 0xAB70 + 0x13A0) ?? scalar
        case 0x13F8...0x13FD: Unicode.Scalar(scalar.value - 8) ?? scalar
        default: scalar
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
        // Latin IPA letters and small capitals
        0x0251: "a", 0x0261: "g", 0x0262: "g", 0x0269: "l", 0x026A: "l", 0x028F: "y", 0x029C: "h", 0x0274: "n",
        0x0280: "r", 0x0299: "b", 0x029F: "l", 0x028B: "u", 0x0237: "j", 0x1D00: "a", 0x1D04: "c", 0x1D05: "d",
        0x1D07: "e", 0x1D0A: "j", 0x1D0B: "k", 0x1D0D: "m", 0x1D0F: "o", 0x1D18: "p", 0x1D1B: "t", 0x1D1C: "u",
        0x1D20: "v", 0x1D21: "w", 0x1D22: "z", 0xA731: "s", 0xA7AE: "l",
        // Armenian
        0x053C: "L", 0x054D: "U", 0x054F: "S", 0x0555: "o", 0x0561: "w", 0x0566: "q", 0x0570: "h", 0x0575: "j",
        0x0578: "n", 0x057D: "u", 0x0581: "g", 0x0585: "o",
        // Cherokee (capitals; small letters are read as their capitals first)
        0x13A0: "D", 0x13A1: "R", 0x13A2: "T", 0x13A9: "y", 0x13AA: "A", 0x13AB: "J", 0x13AC: "E", 0x13B3: "W",
        0x13B7: "M", 0x13BB: "H", 0x13BD: "Y", 0x13C0: "G", 0x13C3: "Z", 0x13CF: "b", 0x13D2: "R", 0x13D4: "W",
        0x13D5: "S", 0x13D9: "V", 0x13DA: "S", 0x13DE: "L", 0x13DF: "C", 0x13E2: "P", 0x13E6: "K", 0x13F4: "B",
        // Lisu
        0xA4D0: "B", 0xA4D1: "P", 0xA4D2: "d", 0xA4D3: "D", 0xA4D4: "T", 0xA4D6: "G", 0xA4D7: "K", 0xA4D9: "J",
        0xA4DA: "C", 0xA4DC: "Z", 0xA4DD: "F", 0xA4DF: "M", 0xA4E0: "N", 0xA4E1: "L", 0xA4E2: "S", 0xA4E3: "R",
        0xA4E6: "V", 0xA4E7: "H", 0xA4EA: "W", 0xA4EB: "X", 0xA4EC: "Y", 0xA4EE: "A", 0xA4F0: "E", 0xA4F2: "l",
        0xA4F3: "o", 0xA4F4: "U", 0xA4F8: ".", 0xA4F9: ",",
        // Canadian Syllabics
        0x142F: "V", 0x144C: "U", 0x146B: "q", 0x146D: "P", 0x146F: "d", 0x148D: "J", 0x14AA: "L", 0x1515: "S",
        0x1541: "x", 0x157C: "H", 0x1587: "R", 0x15B4: "F", 0x15C5: "A", 0x15DE: "D", 0x15EF: "W", 0x15F0: "M",
        0x15F7: "B",
        // Coptic
        0x2C9E: "o", 0x2C9F: "o", 0x2CA2: "P", 0x2CA3: "p", 0x2CA4: "C", 0x2CA5: "c", 0x2CAC: "X", 0x2CAD: "x",
        // zeros of other scripts that are drawn as a ring (Arabic-Indic zeros are a dot)
        0x0966: "o", 0x09E6: "o", 0x0A66: "o", 0x0AE6: "o", 0x0B66: "o", 0x0C66: "o", 0x0CE6: "o", 0x0D66: "o",
        0x0E50: "o", 0x0ED0: "o", 0x1040: "o", 0x17E0: "o", 0x0660: ".", 0x06F0: ".",
        // signs
        0x2212: "-", 0x2018: "'", 0x2019: "'", 0x02BC: "'", 0x00B7: ".", 0x2027: ".",
    ]
}
