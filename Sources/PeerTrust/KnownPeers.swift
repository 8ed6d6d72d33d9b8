import DiscoveryCore
import TransportCore

/// The contents of a `known_peers` file: which key each service is pinned to (ssh's
/// known_hosts, for rooms).
///
/// One pin per line, `<service> <key>`: the service's full name in DNS-SD presentation form
/// (`ServiceName`) and the key's full form (`SHA256:` and 43 characters), separated by spaces or
/// tabs. Blank lines and lines starting with `#` are comments. Lines that are neither are
/// skipped with a warning, and so are lines longer than `maximumLineLength` bytes; only the
/// first `maximumLines` lines are read. Comments and skipped lines that were read are written
/// back unchanged.
public struct KnownPeers: Sendable {
    /// Lines read at most; the rest of a longer file is not read.
    public static let maximumLines = 10_000
    /// Bytes in a line at most, without its newline.
    public static let maximumLineLength = 1_024

    /// A pin: the key a service must present.
    public struct Pin: Sendable, Hashable {
        public let service: ServiceName
        public let key: PublicKeyFingerprint
        /// Its line in the file, from 1.
        public let lineNumber: Int
    }

    /// A line the reader did not use, and why.
    public struct Warning: Sendable, Hashable, CustomStringConvertible {
        /// From 1.
        public let lineNumber: Int
        public let reason: String
        public var description: String { "line \(lineNumber): \(reason)" }
    }

    enum Line: Sendable, Hashable {
        /// A pin, and what followed its key on the line (a `#` comment, kept as it was).
        case pin(ServiceName, PublicKeyFingerprint, trailer: [UInt8])
        /// A comment, a blank line or a line that could not be read, kept byte for byte.
        case kept([UInt8])
    }

    private(set) var lines: [Line] = []
    /// The lines that were skipped, in order (and the lines not read at all).
    public private(set) var warnings: [Warning] = []
    /// Why writing this back would lose lines of the file (a line too long to keep, lines past
    /// `maximumLines`, bytes past what was read), or nil when every line was read.
    public private(set) var incompleteness: String?

    /// No pins.
    public init() {}

    /// Reads the bytes of a file.
    /// - Parameter isWhole: false when `bytes` is only the start of the file (the reader
    ///   stopped): its last, partial line is then not read either.
    public init(parsing bytes: [UInt8], isWhole: Bool = true) {
        let file = ConfigFileLines(bytes, isWhole: isWhole, maximumLines: Self.maximumLines, maximumLineLength: Self.maximumLineLength)
        incompleteness = file.incompleteness
        if let linesNotRead = file.linesNotRead { warnings.append(linesNotRead) }
        for (offset, piece) in file.pieces.enumerated() {
            let number = offset + 1
            guard piece.count <= Self.maximumLineLength else {
                warnings.append(Warning(lineNumber: number, reason: "skipped: longer than \(Self.maximumLineLength) bytes"))
                incompleteness = incompleteness ?? "line \(number) is longer than \(Self.maximumLineLength) bytes"
                // Kept as an empty line, so that the lines after it keep their numbers.
                lines.append(.kept([]))
                continue
            }
            switch Self.parse(Array(piece)) {
            case .success(let line): lines.append(line)
            case .failure(let problem):
                warnings.append(Warning(lineNumber: number, reason: "skipped: \(problem.reason)"))
                lines.append(.kept(Array(piece)))
            }
        }
    }

    /// The warnings as lines for the user, `'<path>' line N: <reason>`: at most `limit`, then
    /// one line with how many more there are.
    public func warningNotes(path: String, limit: Int = 5) -> [String] {
        var notes = warnings.prefix(limit).map { "'\(path)' \($0)" }
        if warnings.count > limit { notes.append("'\(path)': \(warnings.count - limit) more lines skipped") }
        return notes
    }

    /// The file's bytes: every line read, pins as `<service> <key>`, each ending in a newline.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        for line in lines {
            switch line {
            case .pin(let service, let key, let trailer): result += Array("\(service.presentation) \(key.full)".utf8) + trailer
            case .kept(let text): result += text
            }
            result.append(UInt8(ascii: "\n"))
        }
        return result
    }

    /// Every pin, in file order.
    public var pins: [Pin] {
        lines.enumerated().compactMap { offset, line in
            guard case .pin(let service, let key, _) = line else { return nil }
            return Pin(service: service, key: key, lineNumber: offset + 1)
        }
    }

    /// Why this file may pin `instance` without `pin(for:)` knowing it, or nil: it was not read
    /// whole, or a line could not be read (whatever it names: a hand-edited line may name the
    /// service in a way the reader does not see). Trust on first use must not go ahead then: a
    /// pin the reader skipped would be silently replaced by whoever answers.
    public func uncertainty(about instance: ServiceInstance) -> String? {
        if let incompleteness { return "it was not read whole: \(incompleteness)" }
        let name = ServiceName(instance)
        guard let first = warnings.first else { return nil }
        let naming = warnings.first { warning in
            guard warning.lineNumber >= 1, warning.lineNumber <= lines.count,
                  case .kept(let text) = lines[warning.lineNumber - 1],
                  let field = text.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }).first,
                  let service = String(validating: field, as: UTF8.self).flatMap(ServiceName.init(presentation:))
            else { return false }
            return service.isSame(as: name)
        }
        let warning = naming ?? first
        return "line \(warning.lineNumber) cannot be read (\(warning.reason))\(naming == nil ? " and may be meant for it" : " and names it")"
    }

    /// The pin of `instance`: the first line that names it.
    public func pin(for instance: ServiceInstance) -> Pin? {
        let name = ServiceName(instance)
        return pins.first { $0.service.isSame(as: name) }
    }

    /// Pins `instance` to `key`: replaces its first line (and removes any later line that
    /// names it too), or appends a line.
    /// - Returns: the pin as it now stands, with its line number.
    @discardableResult
    public mutating func pin(_ key: PublicKeyFingerprint, for instance: ServiceInstance) -> Pin {
        let name = ServiceName(instance)
        let existing = pins.filter { $0.service.isSame(as: name) }
        guard let first = existing.first else {
            lines.append(.pin(name, key, trailer: []))
            return Pin(service: name, key: key, lineNumber: lines.count)
        }
        lines[first.lineNumber - 1] = .pin(first.service, key, trailer: [])
        for later in existing.dropFirst().reversed() { lines.remove(at: later.lineNumber - 1) }
        return Pin(service: first.service, key: key, lineNumber: first.lineNumber)
    }

    /// Removes every line that pins `instance`.
    /// - Returns: the pins removed, with the line numbers they had; empty when there was none.
    @discardableResult
    public mutating func forget(_ instance: ServiceInstance) -> [Pin] {
        let name = ServiceName(instance)
        let removed = pins.filter { $0.service.isSame(as: name) }
        for pin in removed.reversed() { lines.remove(at: pin.lineNumber - 1) }
        return removed
    }

    struct Problem: Error { let reason: String }

    /// Why a service name read from the file is not one svc would have written, or nil: an
    /// invisible character (a byte-order mark, a zero-width space) anywhere, or punctuation in the
    /// type or the domain (a quoted name). Such a line may be a pin meant for a room under a name
    /// that looks the same, so it is skipped with a warning (which stops first contacts).
    static func oddity(in service: ServiceName) -> String? {
        for label in service.labels where label.unicodeScalars.contains(where: { $0.properties.generalCategory == .format }) {
            return "the service name holds an invisible character (in '\(ServiceName.escaped(label).unicodeScalars.map { $0.properties.generalCategory == .format ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())')"
        }
        for label in service.labels.dropFirst() where !label.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" || $0 == "_" }) {
            return "the type or domain '\(ServiceName.escaped(label))' holds characters DNS names do not have"
        }
        return nil
    }

    /// One line of at most `maximumLineLength` bytes.
    static func parse(_ line: [UInt8]) -> Result<Line, Problem> {
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        let fields = line.split(whereSeparator: isBlank)
        guard let first = fields.first, first.first != UInt8(ascii: "#") else { return .success(.kept(line)) }
        // Two fields, then at most a `#` comment.
        guard fields.count == 2 || (fields.count > 2 && fields[2].first == UInt8(ascii: "#")) else {
            return .failure(Problem(reason: "expected '<service> <key>', two fields (and perhaps a # comment), not \(fields.count)"))
        }
        guard let text = String(validating: first, as: UTF8.self), let service = ServiceName(presentation: text) else {
            return .failure(Problem(reason: "the service is not a DNS-SD name such as Living\\032room._p2pipp._tcp.local."))
        }
        if let oddity = Self.oddity(in: service) { return .failure(Problem(reason: oddity)) }
        guard let keyText = String(validating: fields[1], as: UTF8.self), keyText.lowercased().hasPrefix("sha256:"),
              let key = PublicKeyFingerprint(keyText)
        else {
            return .failure(Problem(reason: "the key is not a full fingerprint, SHA256: and 43 characters of base64"))
        }
        // A comment after the key is kept, after one space (and without a carriage return).
        var trailer: [UInt8] = []
        if fields.count > 2 {
            trailer = [UInt8(ascii: " ")] + line[fields[2].startIndex...]
            while trailer.last == UInt8(ascii: "\r") { trailer.removeLast() }
        }
        return .success(.pin(service, key, trailer: trailer))
    }
}
