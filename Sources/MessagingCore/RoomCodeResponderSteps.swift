/// The publisher's side of the room-code exchange as a pure state machine: what each frame a
/// connection sends before (and after) its HELLO means, and which are out of order. The
/// cryptography (CPace) is the caller's: the machine says when to run it and takes the result.
///
/// A connection may run the exchange once, between the publisher's HELLO and its own:
/// `CODE_START` → (the publisher answers `CODE_REPLY`) → `CODE_CONFIRM` → `HELLO`. Every frame
/// of the exchange out of order (first, twice, after HELLO, from the wrong side) is a
/// `code-exchange` error, which ends the connection (docs/PROTOCOL.md, *Room codes*).
public struct RoomCodeResponderSteps: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// Nothing of the exchange yet.
        case idle
        /// CODE_REPLY was sent; CODE_CONFIRM is due.
        case awaitingConfirmation
        /// The caller is checking the client's tag (`checked(_:)` ends it).
        case checking
        /// The client proved it knows the code.
        case passed
        /// The exchange failed; the connection is ending.
        case failed
        /// The client's HELLO was accepted: the exchange can no longer run.
        case joined
    }

    /// What the caller does with a frame.
    public enum Step: Sendable, Hashable {
        /// Run the responder on the client's share and data: send `CODE_REPLY`, or refuse
        /// (and call `failed()`) when the share is unusable.
        case answer(share: [UInt8], associatedData: [UInt8])
        /// Check the client's tag; then call `checked(_:)`.
        case check(tag: [UInt8])
        /// The client's HELLO, and whether this connection passed the code.
        case hello(Message.Hello, passedCode: Bool)
        /// Not part of the exchange: handled as any frame at this point.
        case other(Message)
        /// The client said the exchange failed on its side (`ERROR wrong-room-code`): a failed attempt.
        case peerFailed
        /// Refuse with this error (it ends the connection).
        case refuse(ProtocolError)
        /// Nothing to do (the connection is ending).
        case ignore
    }

    public private(set) var state: State = .idle
    /// Why this connection cannot run the exchange (no code in the room, no TLS); nil when it can.
    private let unavailable: String?

    /// - Parameter unavailable: why a code cannot be checked on this connection, or nil when it can.
    public init(unavailable: String?) {
        self.unavailable = unavailable
    }

    public mutating func receive(_ message: Message) -> Step {
        switch (state, message) {
        case (.failed, _), (.checking, _):
            return .ignore
        case (_, .codeReply):
            return refuse("CODE_REPLY is the publisher's frame; a client never sends it")
        case (.joined, .codeStart), (.joined, .codeConfirm):
            return refuse("the room-code exchange must come before HELLO")
        case (.idle, .codeStart(let share, let data)):
            if let unavailable { return refuse(unavailable) }
            state = .awaitingConfirmation
            return .answer(share: share, associatedData: data)
        case (.idle, .codeConfirm):
            return refuse("CODE_CONFIRM came before CODE_START")
        case (.awaitingConfirmation, .codeConfirm(let tag)):
            state = .checking
            return .check(tag: tag)
        case (.awaitingConfirmation, .codeStart):
            return refuse("CODE_START came twice")
        case (.awaitingConfirmation, .error(let code, _)) where code == ProtocolError.Code.wrongRoomCode.rawValue:
            state = .failed
            return .peerFailed
        case (.awaitingConfirmation, .hello):
            return refuse("HELLO came before CODE_CONFIRM")
        case (.awaitingConfirmation, _):
            return refuse("the exchange is under way: CODE_CONFIRM is due")
        case (.passed, .codeStart), (.passed, .codeConfirm):
            return refuse("the room-code exchange already completed on this connection")
        case (.idle, .hello(let hello)):
            return .hello(hello, passedCode: false)
        case (.passed, .hello(let hello)):
            return .hello(hello, passedCode: true)
        case (.idle, _), (.passed, _), (.joined, _):
            return .other(message)
        }
    }

    /// The tag was checked: right (`passed`) or wrong (`failed`).
    public mutating func checked(_ right: Bool) {
        guard state == .checking else { return }
        state = right ? .passed : .failed
    }

    /// The exchange could not go on (an unusable share, a refusal): the connection ends.
    public mutating func failed() {
        state = .failed
    }

    /// The client's HELLO was accepted.
    public mutating func joined() {
        state = .joined
    }

    private mutating func refuse(_ why: String) -> Step {
        state = .failed
        return .refuse(ProtocolError(.codeExchange, why))
    }
}
