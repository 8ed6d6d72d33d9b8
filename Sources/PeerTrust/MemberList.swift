import SafeText
import TransportCore

/// The contents of a room's members file: the keys the room knows, each with the name it is
/// listed under (svc-publish `--admit known` admits only these; `--room-code` adds the keys
/// that passed the code, so that they need no code again).
///
/// One member per line, `SHA256:<key> [name]`: the key's full form, then optionally spaces or
/// tabs and the name (the rest of the line; a valid member name, which has no spaces). Blank lines and lines
/// starting with `#` are comments. A line that is neither (a malformed key, a name that is no
/// valid member name, a line longer than `maximumLineLength`) is skipped with a warning: its
/// key is not listed. Only the first `maximumLines` lines are read; the first line of a key
/// wins. Every line read is written back unchanged.
public struct MemberList: Sendable {
    /// Lines read at most, and members at most: a full list takes no more.
    public static let maximumLines = 10_000
    /// Bytes in a line at most, without its newline.
    public static let maximumLineLength = 1_024

    /// A listed member: its key, and the name it is listed under (nil: none given).
    public struct Entry: Sendable, Hashable {
        public let key: PublicKeyFingerprint
        public let name: String?
    }

    private var lines: [[UInt8]] = []
    /// Each listed key's line number: the first line listing a name holds it.
    private var position: [PublicKeyFingerprint: Int] = [:]
    /// Each listed name's comparison key (`MemberName.comparisonKey`) with the first key listed under it.
    private var holders: [String: PublicKeyFingerprint] = [:]
    private var entries: [PublicKeyFingerprint: Entry] = [:]
    /// The lines that were skipped, in order.
    public private(set) var warnings: [KnownPeers.Warning] = []
    /// Why writing this back would lose lines of the file, or nil when every line was read.
    public private(set) var incompleteness: String?

    /// No members.
    public init() {}

    /// Reads the bytes of a file.
    /// - Parameter isWhole: false when `bytes` is only the start of the file: its last,
    ///   partial line is then not read either.
    public init(parsing bytes: [UInt8], isWhole: Bool = true) {
        let file = ConfigFileLines(bytes, isWhole: isWhole, maximumLines: Self.maximumLines, maximumLineLength: Self.maximumLineLength)
        incompleteness = file.incompleteness
        if let linesNotRead = file.linesNotRead { warnings.append(linesNotRead) }
        for (offset, piece) in file.pieces.enumerated() {
            lines.append(Array(piece))
            guard piece.count <= Self.maximumLineLength else {
                warnings.append(.init(lineNumber: offset + 1, reason: "longer than \(Self.maximumLineLength) bytes; skipped"))
                continue
            }
            switch Self.parse(Array(piece)) {
            case .success(let entry?):
                if entries[entry.key] == nil {
                    entries[entry.key] = entry
                    position[entry.key] = lines.count
                    if let name = entry.name, holders[MemberName.comparisonKey(name)] == nil { holders[MemberName.comparisonKey(name)] = entry.key }
                }
            case .success(nil):
                break
            case .failure(let reason):
                warnings.append(.init(lineNumber: offset + 1, reason: reason.reason + "; skipped"))
            }
        }
    }

    /// A member line, nil for a comment or a blank line, or why the line cannot be read.
    static func parse(_ line: [UInt8]) -> Result<Entry?, LineProblem> {
        var text = line
        if text.last == UInt8(ascii: "\r") { text.removeLast() }
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let trimmed = text.drop(while: isBlank)
        if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { return .success(nil) }
        guard let string = String(validating: trimmed, as: UTF8.self) else { return .failure(LineProblem("not UTF-8")) }
        let keyText = string.prefix { $0 != " " && $0 != "\t" }
        guard let key = PublicKeyFingerprint(fullForm: String(keyText)) else {
            return .failure(LineProblem("it does not start with a key (SHA256: and 43 characters)"))
        }
        let rest = string.dropFirst(keyText.count).drop { $0 == " " || $0 == "\t" }
        var name = Substring(rest)
        while let last = name.last, last == " " || last == "\t" { name = name.dropLast() }
        guard !name.isEmpty else { return .success(Entry(key: key, name: nil)) }
        if let problem = MemberName.problem(in: String(name)) { return .failure(LineProblem("the name is not a valid member name (\(problem))")) }
        return .success(Entry(key: key, name: String(name)))
    }

    /// Why a line was skipped.
    struct LineProblem: Error, Sendable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The member listed with `key`, or nil.
    public func entry(for key: PublicKeyFingerprint) -> Entry? { entries[key] }

    /// The key listed under a name the room counts as the same as `name` (`MemberName.same`),
    /// or nil. When several are (a file edited by hand), the first line's.
    public func holder(ofName name: String) -> PublicKeyFingerprint? {
        guard name.utf8.count <= MemberName.maximumLookupBytes else { return nil }
        return holders[MemberName.comparisonKey(name)]
    }

    /// Names listed for more than one key, as the room compares names: each with its keys'
    /// short forms (the first line's key holds the name).
    public var clashingNames: [(name: String, keys: [String])] {
        var byName: [String: [Entry]] = [:]
        for entry in entries.values { if let name = entry.name { byName[MemberName.comparisonKey(name), default: []].append(entry) } }
        return byName.values.filter { $0.count > 1 }.map { clash in
            let sorted = clash.sorted { order($0) < order($1) }
            return (sorted[0].name ?? "", sorted.map(\.key.short))
        }.sorted { $0.name < $1.name }
    }

    /// Where `entry` came in the file (its line's index).
    private func order(_ entry: Entry) -> Int { position[entry.key] ?? Int.max }

    /// How many members are listed.
    public var count: Int { entries.count }

    /// Lists `key` under `name` (left out when it is no valid member name) at the end.
    /// - Returns: false, changing nothing, when the key is listed already or the list is full.
    @discardableResult
    public mutating func add(_ key: PublicKeyFingerprint, name: String) -> Bool {
        guard entries[key] == nil, lines.count < Self.maximumLines else { return false }
        // A name another key is listed under (or one that looks the same) stays that key's:
        // this key is listed without a name.
        let listedName = MemberName.problem(in: name) == nil && holder(ofName: name) == nil ? name : nil
        let line = Array((key.full + (listedName.map { " " + $0 } ?? "")).utf8)
        guard line.count <= Self.maximumLineLength else { return add(key, name: "") }
        lines.append(line)
        entries[key] = Entry(key: key, name: listedName)
        position[key] = lines.count
        if let listedName { holders[MemberName.comparisonKey(listedName)] = key }
        return true
    }

    /// The file's bytes: every line read, then those added, each ending in a newline.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        for line in lines {
            result += line
            result.append(UInt8(ascii: "\n"))
        }
        return result
    }

    /// The warnings as lines for the user, `'<path>' line N: <reason>`: at most `limit`, then
    /// one line with how many more there are.
    public func warningNotes(path: String, limit: Int = 5) -> [String] {
        var notes = warnings.prefix(limit).map { "'\(path)' \($0)" }
        if warnings.count > limit { notes.append("'\(path)': \(warnings.count - limit) more lines skipped") }
        return notes
    }
}
