import TransportCore

/// A TSIG key as BIND's `tsig-keygen` writes it:
///
///     key "svc-lab" {
///         algorithm hmac-sha256;
///         secret "base64...";
///     };
///
/// The secret is kept inside this module only; `description` shows the key's name and
/// algorithm, never the secret.
public struct TSIGKey: Sendable, Equatable, CustomStringConvertible {
    /// The HMAC algorithms BIND offers for TSIG (RFC 8945).
    public enum Algorithm: String, Sendable, CaseIterable {
        case hmacMD5 = "hmac-md5", hmacSHA1 = "hmac-sha1", hmacSHA224 = "hmac-sha224"
        case hmacSHA256 = "hmac-sha256", hmacSHA384 = "hmac-sha384", hmacSHA512 = "hmac-sha512"
    }

    /// The longest key file read, in bytes; a `tsig-keygen` file is about 100.
    public static let maximumFileSize = 4096
    /// The longest secret accepted, in bytes after base64 decoding.
    public static let maximumSecretLength = 512

    /// The key's name, which the server's `update-policy` grants.
    public let name: DNSName
    /// The HMAC algorithm.
    public let algorithm: Algorithm
    /// The secret in base64, as the file holds it: handed to ldns only.
    let secretBase64: String

    public var description: String { "TSIG key \(name) (\(algorithm.rawValue), secret hidden)" }

    /// Reads the text of a `tsig-keygen` key file.
    /// - Parameter source: where the text came from, for messages (a path).
    /// - Throws: `.keyFile` with what is wrong: not exactly one `key` statement, an unknown
    ///   algorithm, a missing or undecodable secret, anything else in the file.
    public init(parsing text: String, source: String) throws(UnicastDNSSDError) {
        func bad(_ what: String) -> UnicastDNSSDError {
            UnicastDNSSDError(.keyFile, "\(source): \(what); the file must be what 'tsig-keygen -a hmac-sha256 NAME' prints")
        }
        guard text.utf8.count <= Self.maximumFileSize else { throw bad("longer than \(Self.maximumFileSize) bytes") }
        guard let tokens = Self.tokens(text) else { throw bad("an unterminated quoted string or an unexpected character") }
        var rest = tokens[...]
        // Messages name a token by its kind and place, never by its text: a misplaced secret
        // would otherwise be printed.
        func place() -> String { "at token \(tokens.count - rest.count + 1)" }
        func take(_ expected: Token) throws(UnicastDNSSDError) {
            guard rest.first == expected else { throw bad("expected \(expected) but found \(rest.first.map { "\($0) \(place())" } ?? "the end")") }
            rest = rest.dropFirst()
        }
        func word() throws(UnicastDNSSDError) -> String {
            switch rest.first {
            case .word(let value)?, .quoted(let value)?: rest = rest.dropFirst(); return value
            default: throw bad("expected a name or value but found \(rest.first.map { "\($0) \(place())" } ?? "the end")")
            }
        }
        try take(.word("key"))
        let keyName = try word()
        try take(.open)
        var algorithm: Algorithm?
        var secret: String?
        while rest.first != .close {
            let fieldPlace = place()
            let field = try word()
            let valuePlace = place()
            let value = try word()
            try take(.semicolon)
            switch field {
            case "algorithm":
                guard algorithm == nil else { throw bad("two algorithm lines") }
                guard let known = Algorithm(rawValue: value.lowercased()) else {
                    throw bad("unknown algorithm \(valuePlace) (one of \(Algorithm.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                algorithm = known
            case "secret":
                guard secret == nil else { throw bad("two secret lines") }
                secret = value
            default:
                throw bad("unknown statement \(fieldPlace) in the key (a key holds one algorithm and one secret line)")
            }
        }
        try take(.close)
        try take(.semicolon)
        guard rest.isEmpty else { throw bad("more than one statement (one key per file)") }
        guard let algorithm else { throw bad("no algorithm line") }
        guard let secret else { throw bad("no secret line") }
        guard let decoded = Base64.decodePadded(secret), !decoded.isEmpty, decoded.count <= Self.maximumSecretLength else {
            throw bad("the secret is not base64 of 1 to \(Self.maximumSecretLength) bytes")
        }
        do {
            name = try DNSName(dotted: keyName)
        } catch {
            throw bad("the key name is not a DNS name (\(error.message))")
        }
        guard !name.labels.isEmpty else { throw bad("the key has an empty name") }
        self.algorithm = algorithm
        self.secretBase64 = secret
    }

    enum Token: Equatable, CustomStringConvertible {
        case word(String), quoted(String), open, close, semicolon
        var description: String {
            switch self {
            case .word("key"): "'key'"
            case .word: "a word"
            case .quoted: "a quoted string"
            case .open: "'{'"
            case .close: "'}'"
            case .semicolon: "';'"
            }
        }
    }

    /// Splits the file into tokens; nil on an unterminated string or a character outside the
    /// grammar (including any control character but whitespace).
    static func tokens(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.first {
            switch scalar {
            case " ", "\t", "\n", "\r":
                scalars = scalars.dropFirst()
            case "{": tokens.append(.open); scalars = scalars.dropFirst()
            case "}": tokens.append(.close); scalars = scalars.dropFirst()
            case ";": tokens.append(.semicolon); scalars = scalars.dropFirst()
            case "\"":
                let body = scalars.dropFirst()
                guard let end = body.firstIndex(of: "\""), !body[..<end].contains(where: { $0.value < 0x20 || $0 == "\\" }) else { return nil }
                tokens.append(.quoted(String(body[..<end])))
                scalars = body[body.index(after: end)...]
            default:
                let isWordScalar: (Unicode.Scalar) -> Bool = { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.+/=".unicodeScalars.contains($0)) }
                let word = scalars.prefix(while: isWordScalar)
                guard !word.isEmpty else { return nil }
                tokens.append(.word(String(word)))
                scalars = scalars.dropFirst(word.count)
            }
        }
        return tokens
    }
}
