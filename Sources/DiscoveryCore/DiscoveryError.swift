/// An invalid service type, instance name, domain or TXT record.
///
/// `message` says what was wrong and what a valid value looks like, so it can be shown to a
/// user as it is.
public struct DiscoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule was broken. A struct over a private enum, so codes can be added later.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case invalidServiceType, invalidInstanceName, invalidDomain, invalidTXTRecord
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        public static let invalidServiceType = Code(.invalidServiceType)
        public static let invalidInstanceName = Code(.invalidInstanceName)
        public static let invalidDomain = Code(.invalidDomain)
        public static let invalidTXTRecord = Code(.invalidTXTRecord)

        public var description: String { "\(value)" }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
