/// Why a ruleset's text could not be read: it is malformed, too large or nested too deep.
public struct FirewallParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for people (already says which input).
    public let message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}
