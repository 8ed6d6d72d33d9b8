extension CPace {
    /// The party that speaks first (`A` in the draft): in svc, the TLS client (svc-connect).
    ///
    /// - Important: Not `Sendable`: one session drives it, in order: `share`, then
    ///   `receive(responderShare:responderAssociatedData:)`, then `confirm(responderTag:)`.
    public final class Initiator {
        private let exchange: CPaceExchange

        /// Starts an exchange: samples the secret scalar and computes the share `Ya`.
        ///
        /// - Parameters:
        ///   - code: the room code both parties were told.
        ///   - channelIdentifier: `CI`, see `CPace.channelIdentifier(initiatorKey:responderKey:)`.
        ///   - sessionID: `sid`, keying material exported from the TLS session (16 to 1024 bytes).
        ///   - associatedData: `ADa`, sent in the clear beside the share (at most 1024 bytes).
        /// - Throws: `RoomCodeError` `.invalidInput` for inputs out of bounds, `.libsodium`.
        public convenience init(code: RoomCode, channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8] = []) throws {
            try self.init(password: code.passwordBytes, channelIdentifier: channelIdentifier, sessionID: sessionID,
                          associatedData: associatedData)
        }

        /// Starts an exchange on any password bytes (the draft's `PRS`); svc uses `init(code:…)`.
        public convenience init(password: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8] = []) throws {
            try self.init(exchange: CPaceExchange(role: .initiator, password: password, channelIdentifier: channelIdentifier,
                                                  sessionID: sessionID, associatedData: associatedData))
        }

        init(exchange: CPaceExchange) {
            self.exchange = exchange
        }

        /// `Ya`, to send with `associatedData`: 32 bytes.
        public var share: [UInt8] { exchange.share }
        /// `ADa`, as given.
        public var associatedData: [UInt8] { exchange.associatedData }

        /// Takes the responder's share `Yb` and data `ADb`; returns this side's tag `Ta`, to send
        /// only after `confirm(responderTag:)` succeeded.
        ///
        /// - Throws: `RoomCodeError` `.invalidShareLength`, `.invalidShare` (identity or not a
        ///   canonical encoding), `.reflectedShare`, `.invalidInput` (`ADb` too long), `.misuse`.
        ///   Any of them ends the exchange.
        public func receive(responderShare: [UInt8], responderAssociatedData: [UInt8]) throws -> [UInt8] {
            try exchange.receive(peerShare: responderShare, peerAssociatedData: responderAssociatedData)
        }

        /// Checks the responder's tag `Tb` (constant time); returns the ISK when it is right.
        ///
        /// - Throws: `RoomCodeError` `.confirmationFailed` (wrong code, relayed or changed
        ///   exchange), `.invalidTagLength`, `.misuse`. Any of them ends the exchange.
        public func confirm(responderTag: [UInt8]) throws -> SessionKey {
            try exchange.confirm(peerTag: responderTag)
        }
    }

    /// The party that answers (`B` in the draft): in svc, the TLS server (svc-publish).
    ///
    /// - Important: Not `Sendable`: one session drives it, in order: `share`, then
    ///   `receive(initiatorShare:initiatorAssociatedData:)`, then `confirm(initiatorTag:)`.
    public final class Responder {
        private let exchange: CPaceExchange

        /// Starts an exchange: samples the secret scalar and computes the share `Yb`.
        ///
        /// - Parameters: as for `Initiator.init(code:channelIdentifier:sessionID:associatedData:)`,
        ///   with `associatedData` this side's `ADb`.
        /// - Throws: `RoomCodeError` `.invalidInput` for inputs out of bounds, `.libsodium`.
        public convenience init(code: RoomCode, channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8] = []) throws {
            try self.init(password: code.passwordBytes, channelIdentifier: channelIdentifier, sessionID: sessionID,
                          associatedData: associatedData)
        }

        /// Starts an exchange on any password bytes (the draft's `PRS`); svc uses `init(code:…)`.
        public convenience init(password: [UInt8], channelIdentifier: [UInt8], sessionID: [UInt8], associatedData: [UInt8] = []) throws {
            try self.init(exchange: CPaceExchange(role: .responder, password: password, channelIdentifier: channelIdentifier,
                                                  sessionID: sessionID, associatedData: associatedData))
        }

        init(exchange: CPaceExchange) {
            self.exchange = exchange
        }

        /// `Yb`, to send with `associatedData` and the tag: 32 bytes.
        public var share: [UInt8] { exchange.share }
        /// `ADb`, as given.
        public var associatedData: [UInt8] { exchange.associatedData }

        /// Takes the initiator's share `Ya` and data `ADa`; returns this side's tag `Tb`, sent
        /// with `Yb`.
        ///
        /// - Throws: as `Initiator.receive(responderShare:responderAssociatedData:)`.
        public func receive(initiatorShare: [UInt8], initiatorAssociatedData: [UInt8]) throws -> [UInt8] {
            try exchange.receive(peerShare: initiatorShare, peerAssociatedData: initiatorAssociatedData)
        }

        /// Checks the initiator's tag `Ta` (constant time); returns the ISK when it is right.
        ///
        /// - Throws: as `Initiator.confirm(responderTag:)`.
        public func confirm(initiatorTag: [UInt8]) throws -> SessionKey {
            try exchange.confirm(peerTag: initiatorTag)
        }
    }

    /// The intermediate session key (ISK) both parties agree on: 64 bytes, wiped when freed or
    /// by `wipe()`. Derive keys from it with a KDF (draft §4); svc needs only the confirmation.
    ///
    /// - Important: Not `Sendable`: it belongs to the session that ran the exchange.
    public final class SessionKey {
        private let buffer: SecretBuffer

        init(_ buffer: SecretBuffer) {
            self.buffer = buffer
        }

        /// The number of bytes: `CPace.sessionKeyLength`.
        public var count: Int { buffer.count }

        /// Calls `body` with the key's bytes; the pointer must not escape it.
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try buffer.withUnsafeBytes(body)
        }

        /// Overwrites the key with zeros (also done when it is freed).
        public func wipe() {
            buffer.wipe()
        }
    }
}
