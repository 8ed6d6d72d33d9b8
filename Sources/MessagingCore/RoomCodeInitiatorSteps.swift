/// The member's side of the room-code exchange as a pure state machine (see
/// `RoomCodeResponderSteps` for the publisher's): the member starts it when the publisher's
/// HELLO arrives, checks the publisher's tag, then confirms and says HELLO. A publisher that
/// welcomes the member without the exchange, sends a frame of it out of order, or sends
/// anything but HELLO, CODE_REPLY, ERROR and GOODBYE before it proved the code, is refused; its
/// ERROR before the proof ends the join as a refusal by a room not proved (never as a wrong code).
public struct RoomCodeInitiatorSteps: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// No code given: the exchange is not used (a `CODE_REPLY` is out of order).
        case notUsed
        /// Waiting for the publisher's HELLO.
        case waitingForHello
        /// `CODE_START` sent; `CODE_REPLY` is due.
        case awaitingReply
        /// The caller is checking the publisher's tag (`checked(_:)` ends it).
        case checking
        /// The publisher proved the code; our `CODE_CONFIRM` and `HELLO` went out.
        case passed
        /// The exchange failed; the connection is ending.
        case failed
    }

    public enum Step: Sendable, Hashable {
        /// The publisher's HELLO: start the exchange (send `CODE_START`); hold our HELLO.
        case start(Message.Hello)
        /// Check the publisher's share and tag; then call `checked(_:)` and, when right, send
        /// `CODE_CONFIRM` and our HELLO.
        case finish(share: [UInt8], tag: [UInt8], associatedData: [UInt8])
        /// Not part of the exchange: handled as usual.
        case other(Message)
        /// Refuse with this error (it ends the connection).
        case refuse(ProtocolError)
        /// The room sent ERROR before it proved the code: end the join with this error and send
        /// nothing back. Its code is `.codeExchange` whatever code the room claimed (but
        /// `.tooManyAttempts`, kept so that the member tries later): a room that has not proved
        /// the code cannot tell us our code is wrong (only our own check of its tag can).
        case refusedBeforeProof(ProtocolError)
        /// Nothing to do.
        case ignore
    }

    public private(set) var state: State

    /// - Parameter usesCode: whether the member was given a room code.
    public init(usesCode: Bool) {
        state = usesCode ? .waitingForHello : .notUsed
    }

    public mutating func receive(_ message: Message) -> Step {
        switch (state, message) {
        case (.failed, _), (.checking, _):
            return .ignore
        case (_, .codeStart), (_, .codeConfirm):
            return refuse("CODE_START and CODE_CONFIRM are the member's frames; a publisher never sends them")
        case (.waitingForHello, .hello(let hello)):
            state = .awaitingReply
            return .start(hello)
        case (.awaitingReply, .codeReply(let share, let tag, let data)):
            state = .checking
            return .finish(share: share, tag: tag, associatedData: data)
        case (_, .codeReply):
            return refuse("CODE_REPLY came without a CODE_START")
        case (.waitingForHello, .welcome), (.awaitingReply, .welcome):
            return refuse("the room welcomed us without checking the room code")
        case (.waitingForHello, .error(let code, let text)), (.awaitingReply, .error(let code, let text)):
            state = .failed
            let refusal = "the room, which has not proved the room code, refused"
            // The room's guessing limit answers CODE_START, always before any proof: believing
            // it costs nothing (an impostor can make us wait anyway) and keeps "try again later".
            if code == ProtocolError.Code.tooManyAttempts.rawValue {
                return .refusedBeforeProof(ProtocolError(.tooManyAttempts, "\(refusal): \(text)"))
            }
            let claimed = ProtocolError.Code(rawValue: code)?.name ?? "error \(code)"
            return .refusedBeforeProof(ProtocolError(.codeExchange, "\(refusal): \(claimed): \(text)"))
        case (.waitingForHello, .goodbye), (.awaitingReply, .goodbye), (.awaitingReply, .hello):
            return .other(message)
        case (.waitingForHello, _), (.awaitingReply, _):
            // A room that has not proved the code is nobody we talk to: no text, files or pings.
            return refuse("the room sent \(message.typeName) before it proved the room code")
        case (.notUsed, _), (.passed, _):
            return .other(message)
        }
    }

    /// The publisher's tag was checked: right (`passed`) or wrong (`failed`).
    public mutating func checked(_ right: Bool) {
        guard state == .checking else { return }
        state = right ? .passed : .failed
    }

    /// The exchange could not go on (an unusable share): the connection ends.
    public mutating func failed() {
        state = .failed
    }

    private mutating func refuse(_ why: String) -> Step {
        state = .failed
        return .refuse(ProtocolError(.codeExchange, why))
    }
}
