@_spi(_Unicode) import Swift // String._nfd: canonical decomposition from the standard library's own tables

/// The rules for a room member's name: which names are refused, and when two names count as
/// the same because people would see them alike.
///
/// A name is 1 to 32 bytes of UTF-8 and is refused when it contains a character
/// `UnsafeText.problem(inNameCharacter:)` refuses, starts with a combining mark, stacks more
/// than `maximumMarksInARow` combining marks on one letter, writes a letter in a compatibility
/// form (`ℌ`, `²`, halfwidth kana, mathematical letters: anything Unicode's NFKC case folding
/// changes beyond its case; fullwidth ASCII such as `Ａ` is the one compatibility form
/// accepted, and is read as ASCII), or mixes scripts: its letters and its digits other than
/// ASCII `0` to `9` must all be of one `Script` (Latin with Han, Kana and Hangul is the one
/// mix allowed).
///
/// Two names are the same when their `comparisonKey`s are equal: the key is the name
/// decomposed (NFD), with fullwidth ASCII read as ASCII, look-alike letters replaced by one
/// representative (`Confusables`), then case-folded, and a dot above on `i` or `j` left out.
/// So `Ａlice`, `alice`, `ALICE`, `ali\u{301}ce` against `alíce`, Cyrillic `аlice`, IPA
/// `ɑlice` and `A1ICE` all compare equal, as do all-Lisu `ꓐꓳꓐ` and `BOB`.
public enum MemberName {
    /// The longest name, in bytes of UTF-8.
    public static let maximumBytes = 32
    /// The longest spelling of a name that is still looked up (`Roster.id(named:)`): 256
    /// bytes, room for a 32-byte name in fullwidth letters or fully decomposed, and a bound on
    /// the work a peer's TEXT address can cause.
    public static let maximumLookupBytes = 8 * maximumBytes
    /// The most combining marks one letter may carry (Vietnamese needs two; more only serve
    /// to draw over the neighbouring lines).
    public static let maximumMarksInARow = 3

    /// Why `name` cannot be a member's name, or nil when it can.
    public static func problem(in name: String) -> String? {
        let bytes = name.utf8.count
        guard (1...maximumBytes).contains(bytes) else { return "names are 1 to \(maximumBytes) bytes of UTF-8, not \(bytes)" }
        for scalar in name.unicodeScalars {
            if let problem = UnsafeText.problem(inNameCharacter: scalar) { return "names may not contain \(problem)" }
        }
        var marksInARow = 0
        var atStart = true
        var scripts = Set<Script>()
        for scalar in name._nfd {
            defer { atStart = false }
            if isMark(scalar) {
                if atStart { return "names may not start with a combining mark (\(UnsafeText.codePoint(scalar)))" }
                marksInARow += 1
                guard marksInARow <= maximumMarksInARow else {
                    return "names may not stack more than \(maximumMarksInARow) combining marks on one letter"
                }
                continue
            }
            marksInARow = 0
            // Cherokee folds to its capitals, so its small letters are plain letters, not compatibility forms.
            let plain = Confusables.cherokeeCapital(of: Confusables.fullwidthAsASCII(scalar))
            if let script = Script(plain) { scripts.insert(script) }
            if plain.properties.changesWhenNFKCCaseFolded,
               caseFolded(plain).unicodeScalars.contains(where: \.properties.changesWhenNFKCCaseFolded) {
                return "\(UnsafeText.codePoint(scalar)) (\(Character(scalar))) is a compatibility form of a letter; write the plain letter"
            }
        }
        guard Script.mayMix(scripts) else {
            return "names may not mix letters or digits of different scripts (this one has \(scripts.sorted().map(\.name).joined(separator: " and "))); write it in one script"
        }
        return nil
    }

    /// What `name` looks like, as a string: equal keys mean the names would be taken for
    /// each other. Meant for names `problem(in:)` accepts; any string gets a key.
    public static func comparisonKey(_ name: String) -> String {
        var key = ""
        for scalar in name._nfd {
            // A dot above on i or j (both drawn with a dot already) adds nothing to see.
            if scalar == dotAbove, let last = key.unicodeScalars.last, last == "l" || last == "j" { continue }
            for folded in caseFolded(Confusables.representative(of: Confusables.fullwidthAsASCII(scalar))).unicodeScalars {
                key.unicodeScalars.append(Confusables.representative(of: folded))
            }
        }
        return Confusables.mergingLookAlikeSequences(key)
    }

    /// True when `a` and `b` would be taken for each other (equal `comparisonKey`s). A name
    /// longer than `maximumLookupBytes` is the same as nothing, so comparing a peer's address
    /// costs a bounded amount of work.
    public static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count <= maximumLookupBytes, b.utf8.count <= maximumLookupBytes else { return false }
        return comparisonKey(a) == comparisonKey(b)
    }

    /// Full case folding, as lowercase of uppercase (`ß` → `ss`, `ς` → `σ`), decomposed.
    static func caseFolded(_ scalar: Unicode.Scalar) -> String {
        let folded = scalar.properties.uppercaseMapping.lowercased()
        var result = ""
        result.unicodeScalars.append(contentsOf: folded._nfd)
        return result
    }

    /// U+0307 COMBINING DOT ABOVE.
    private static let dotAbove: Unicode.Scalar = "\u{307}"

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
