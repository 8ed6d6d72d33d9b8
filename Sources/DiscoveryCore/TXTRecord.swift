/// A DNS-SD TXT record: an ordered list of `key`, `key=` or `key=value` items (RFC 6763 §6).
///
/// Keys are printable US-ASCII without `=`, compared case-insensitively, and unique: when a
/// decoded record repeats a key, the first occurrence wins (§6.4). Each item is at most 255
/// bytes. Values are raw bytes; `string(forKey:)` reads them as UTF-8.
public struct TXTRecord: Sendable, Hashable {
    /// One item. `value == nil` is a key with no `=` (a boolean attribute); an empty value is `key=`.
    public struct Entry: Sendable, Hashable {
        public let key: String
        public let value: [UInt8]?

        public init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    /// Parses command-line items: `key=value`, `key=` (empty value) or `key` (no value).
    /// - Throws: `DiscoveryError` with code `.invalidTXTRecord`.
    public init(items: [String]) throws(DiscoveryError) {
        for item in items {
            if let equals = item.firstIndex(of: "=") {
                try set(String(item[..<equals]), Array(item[item.index(after: equals)...].utf8))
            } else {
                try set(item, nil)
            }
        }
    }

    /// Adds or replaces the item for `key`.
    /// - Throws: `DiscoveryError` with code `.invalidTXTRecord` for a bad key, an item over
    ///   255 bytes, or a record over 65,535 bytes.
    public mutating func set(_ key: String, _ value: [UInt8]?) throws(DiscoveryError) {
        if let problem = Self.problem(inKey: key) {
            throw DiscoveryError(.invalidTXTRecord, "invalid TXT key '\(key)': \(problem)")
        }
        let itemLength = key.utf8.count + (value.map { $0.count + 1 } ?? 0)
        guard itemLength <= 255 else {
            throw DiscoveryError(.invalidTXTRecord,
                                 "TXT item '\(key)' is \(itemLength) bytes; key, '=' and value together must fit in 255")
        }
        let entry = Entry(key: key, value: value)
        if let index = entries.firstIndex(where: { $0.key.lowercased() == key.lowercased() }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
        guard encoded().count <= 65535 else {
            throw DiscoveryError(.invalidTXTRecord, "the TXT record would exceed 65,535 bytes; send large data over a connection instead")
        }
    }

    /// The item for `key` (case-insensitive): `.some(nil)` for a key without a value.
    public subscript(key: String) -> [UInt8]?? {
        entries.first(where: { $0.key.lowercased() == key.lowercased() }).map(\.value)
    }

    /// The value for `key` as UTF-8 text, or nil when absent, valueless or not UTF-8.
    public func string(forKey key: String) -> String? {
        guard let value = self[key] ?? nil else { return nil }
        return String(validating: value, as: UTF8.self)
    }

    /// Why `key` is not a valid TXT key, or nil when it is.
    static func problem(inKey key: String) -> String? {
        if key.isEmpty { return "keys must have at least one character" }
        if key.contains("=") { return "keys may not contain '='" }
        if !key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) {
            return "keys must be printable US-ASCII"
        }
        return nil
    }

    /// The wire form: length-prefixed items. An empty record is the single byte 0 (§6.1).
    public func encoded() -> [UInt8] {
        guard !entries.isEmpty else { return [0] }
        var bytes: [UInt8] = []
        for entry in entries {
            var item = Array(entry.key.utf8)
            if let value = entry.value { item.append(UInt8(ascii: "=")); item += value }
            bytes.append(UInt8(item.count))
            bytes += item
        }
        return bytes
    }

    /// Decodes the wire form as a receiver should (§6.4): empty items and items starting with
    /// `=` are skipped, later duplicates of a key are ignored, and a key that breaks the rules
    /// drops only its own item.
    /// - Throws: `DiscoveryError` with code `.invalidTXTRecord` when an item's length runs past
    ///   the end of the data.
    public init<Bytes: Collection<UInt8>>(decoding data: Bytes) throws(DiscoveryError) {
        var rest = data[...]
        while let length = rest.first {
            rest = rest.dropFirst()
            guard rest.count >= Int(length) else {
                throw DiscoveryError(.invalidTXTRecord,
                                     "malformed TXT record: an item claims \(length) bytes but only \(rest.count) remain")
            }
            let item = rest.prefix(Int(length))
            rest = rest.dropFirst(Int(length))
            guard !item.isEmpty, item.first != UInt8(ascii: "=") else { continue }
            let equals = item.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = item[..<(equals ?? item.endIndex)]
            guard let key = String(validating: keyBytes, as: UTF8.self), Self.problem(inKey: key) == nil,
                  self[key] == nil
            else { continue }
            entries.append(Entry(key: key, value: equals.map { Array(item[item.index(after: $0)...]) }))
        }
    }
}
