/// A violation of the wire protocol (docs/PROTOCOL.md), with the code sent in `ERROR` frames.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `ERROR` frame codes.
    public enum Code: UInt16, Sendable, Hashable, CaseIterable {
        case badMagic = 1
        case unsupportedVersion = 2
        case frameTooLarge = 3
        case unknownType = 4
        case malformedFrame = 5
        case notHandshaken = 6
        case serverFull = 7
        case handshakeTimeout = 8
        case unknownPeer = 9
        case invalidName = 10
        case heartbeatTimeout = 11
        case fileProtocol = 12
        case tooSlow = 13
        /// Sent in plaintext to a client that did not start TLS, by a server that requires it.
        case tlsRequired = 14
        /// The room has a room code and this key has not passed it (nor is it a listed member).
        case codeRequired = 15
        /// The room-code exchange failed: the codes differ, or a relay sits in between.
        case wrongRoomCode = 16
        /// Too many failed room-code attempts from this address, by this key or in all: wait.
        case tooManyAttempts = 17
        /// The room admits only listed members (`--admit known`), and this key is not listed.
        case notAdmitted = 18
        /// A frame of the room-code exchange out of order, malformed, or where no code can be
        /// checked (a room without a code, a link without TLS).
        case codeExchange = 19

        /// The protocol document's spelling, e.g. `frame-too-large`.
        public var name: String {
            switch self {
            case .badMagic: "bad-magic"
            case .unsupportedVersion: "unsupported-version"
            case .frameTooLarge: "frame-too-large"
            case .unknownType: "unknown-type"
            case .malformedFrame: "malformed-frame"
            case .notHandshaken: "not-handshaken"
            case .serverFull: "server-full"
            case .handshakeTimeout: "handshake-timeout"
            case .unknownPeer: "unknown-peer"
            case .invalidName: "invalid-name"
            case .heartbeatTimeout: "heartbeat-timeout"
            case .fileProtocol: "file-protocol"
            case .tooSlow: "too-slow"
            case .tlsRequired: "tls-required"
            case .codeRequired: "code-required"
            case .wrongRoomCode: "wrong-room-code"
            case .tooManyAttempts: "too-many-attempts"
            case .notAdmitted: "not-admitted"
            case .codeExchange: "code-exchange"
            }
        }

        /// Whether the sender closes the connection after this error.
        public var closesConnection: Bool {
            switch self {
            case .unknownType, .malformedFrame, .unknownPeer, .fileProtocol: false
            default: true
            }
        }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name): \(message)" }
}
