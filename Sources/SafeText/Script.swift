/// A coarse writing-script classification of letters and digits by the Unicode blocks that
/// hold them, for `MemberName`'s rule that a name writes its letters in one script.
///
/// Not Unicode's Script property (the standard library does not expose it): a block of a
/// script is listed here when its letters are in use for names or look like letters of
/// another script. A letter or digit in none of the listed blocks belongs to "another
/// script", which is one script for this rule. Han, Hiragana, Katakana, Bopomofo and Hangul
/// are one script here, as Japanese, Chinese and Korean names mix them.
struct Script: Hashable, Comparable {
    /// The script's position in `blocks`, which orders the scripts in messages.
    let order: Int
    /// What people call the script, as shown in a refusal ("Latin", "Cyrillic").
    let name: String

    /// The script of `scalar` when it is a letter (alphabetic) or a decimal digit other than
    /// ASCII `0` to `9`; nil for ASCII digits and for everything else, which mixes freely.
    init?(_ scalar: Unicode.Scalar) {
        let properties = scalar.properties
        let isDigit = properties.generalCategory == .decimalNumber
        guard properties.isAlphabetic || isDigit, !("0"..."9").contains(scalar) else { return nil }
        let index = Script.blocks.firstIndex { $0.ranges.contains { $0.contains(scalar.value) } }
        order = index ?? Script.blocks.count
        name = index.map { Script.blocks[$0].name } ?? "another script"
    }

    /// True when letters of `scripts` may share a name: all of one script, or Latin with
    /// Han/Kana/Hangul (`Bob的电脑`), whose letters do not pass for Latin ones. This is the
    /// "highly restrictive" level of UTS #39 without its Han+Bopomofo and Han+Hangul special
    /// cases, which are one script here anyway.
    static func mayMix(_ scripts: Set<Script>) -> Bool {
        guard scripts.count > 1 else { return true }
        return scripts.count == 2 && Set(scripts.map(\.name)) == [latin, hanKanaHangul]
    }

    static func < (a: Script, b: Script) -> Bool { a.order < b.order }

    private static let latin = "Latin"
    private static let hanKanaHangul = "Han, Kana or Hangul"

    /// The scripts, each with the code point ranges of its blocks.
    private static let blocks: [(name: String, ranges: [ClosedRange<UInt32>])] = [
        (latin, [0x41...0x5A, 0x61...0x7A, 0xAA...0xAA, 0xBA...0xBA, 0xC0...0x2AF, 0x1D00...0x1DBF,
                 0x1E00...0x1EFF, 0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F, 0xFB00...0xFB06]),
        ("Greek", [0x370...0x3FF, 0x1F00...0x1FFF]),
        ("Cyrillic", [0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F]),
        ("Armenian", [0x530...0x58F, 0xFB13...0xFB17]),
        ("Hebrew", [0x590...0x5FF, 0xFB1D...0xFB4F]),
        ("Arabic", [0x600...0x6FF, 0x750...0x77F, 0x870...0x8FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF]),
        ("Syriac", [0x700...0x74F, 0x860...0x86F]),
        ("Thaana", [0x780...0x7BF]),
        ("NKo", [0x7C0...0x7FF]),
        ("Devanagari", [0x900...0x97F, 0xA8E0...0xA8FF]),
        ("Bengali", [0x980...0x9FF]),
        ("Gurmukhi", [0xA00...0xA7F]),
        ("Gujarati", [0xA80...0xAFF]),
        ("Oriya", [0xB00...0xB7F]),
        ("Tamil", [0xB80...0xBFF]),
        ("Telugu", [0xC00...0xC7F]),
        ("Kannada", [0xC80...0xCFF]),
        ("Malayalam", [0xD00...0xD7F]),
        ("Sinhala", [0xD80...0xDFF]),
        ("Thai", [0xE00...0xE7F]),
        ("Lao", [0xE80...0xEFF]),
        ("Tibetan", [0xF00...0xFFF]),
        ("Myanmar", [0x1000...0x109F, 0xA9E0...0xA9FF, 0xAA60...0xAA7F]),
        ("Georgian", [0x10A0...0x10FF, 0x1C90...0x1CBF, 0x2D00...0x2D2F]),
        ("Ethiopic", [0x1200...0x139F, 0x2D80...0x2DDF, 0xAB00...0xAB2F]),
        ("Cherokee", [0x13A0...0x13FF, 0xAB70...0xABBF]),
        ("Canadian Syllabics", [0x1400...0x167F, 0x18B0...0x18FF]),
        ("Ogham", [0x1680...0x169F]),
        ("Runic", [0x16A0...0x16FF]),
        ("Khmer", [0x1780...0x17FF, 0x19E0...0x19FF]),
        ("Mongolian", [0x1800...0x18AF]),
        ("Glagolitic", [0x2C00...0x2C5F]),
        ("Coptic", [0x2C80...0x2CFF]),
        ("Tifinagh", [0x2D30...0x2D7F]),
        (hanKanaHangul, [0x1100...0x11FF, 0x2E80...0x2FDF, 0x3005...0x3007, 0x3021...0x303C, 0x3040...0x31FF,
                         0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA960...0xA97F, 0xAC00...0xD7FF, 0xF900...0xFAFF,
                         0xFF66...0xFFDC, 0x20000...0x3FFFF]),
        ("Yi", [0xA000...0xA4CF]),
        ("Lisu", [0xA4D0...0xA4FF, 0x11FB0...0x11FBF]),
        ("Vai", [0xA500...0xA63F]),
        ("Bamum", [0xA6A0...0xA6FF]),
        ("Deseret", [0x10400...0x1044F]),
        ("Osage", [0x104B0...0x104FF]),
    ]
}
