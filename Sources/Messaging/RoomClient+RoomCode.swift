import MessagingCore
import RoomCodeExchange

/// The member's side of the room-code exchange (docs/PROTOCOL.md, *Room codes and admission*):
/// CPace as the initiator, bound to the TLS session (its exported `sid`) and to both keys (`CI`).
/// The order of the frames is `RoomCodeInitiatorSteps`'; this file runs the cryptography.
///
/// - Important: on the client's queue, like the rest of `RoomClient`.
extension RoomClient {
    /// The server's HELLO came and we hold a room code: sends CODE_START (`Ya`).
    func startRoomCode() {
        executor.assertOnExecutor()
        guard let link, let code = options.roomCode, let session = link.connection.secureSession, let ownKey = session.localKey else {
            return failRoomCode(ProtocolError(.codeExchange, "a room code is checked only inside TLS, and this connection is plaintext"))
        }
        do {
            let initiator = try CPace.Initiator(code: code,
                                                channelIdentifier: CPace.channelIdentifier(initiatorKey: ownKey, responderKey: session.peerKey),
                                                sessionID: session.roomCodeSessionID, associatedData: Message.RoomCodeSizes.associatedData)
            self.initiator = initiator
            link.send(.codeStart(share: initiator.share, associatedData: initiator.associatedData))
        } catch {
            failRoomCode(ProtocolError(.codeExchange, "the room-code exchange could not start: \(error)"))
        }
    }

    /// CODE_REPLY: checks the server's tag `Tb`; when right, confirms (`Ta`) and says HELLO.
    func finishRoomCode(share: [UInt8], tag: [UInt8], associatedData: [UInt8]) {
        executor.assertOnExecutor()
        guard let link, let initiator, let session = link.connection.secureSession else {
            return failRoomCode(ProtocolError(.codeExchange, "CODE_REPLY came with no exchange under way"))
        }
        self.initiator = nil
        do {
            let ownTag = try initiator.receive(responderShare: share, responderAssociatedData: associatedData)
            try initiator.confirm(responderTag: tag).wipe()
            codeSteps.checked(true)
            link.answersPings = true
            link.send(.codeConfirm(tag: ownTag))
            link.send(.hello(.init(name: options.name)))
            onEvent(.roomCodeConfirmed(session: session))
            onEvent(.serverHello(name: serverName))
        } catch let error as RoomCodeError where error.code == .confirmationFailed {
            codeSteps.checked(false)
            failRoomCode(ProtocolError(.wrongRoomCode,
                "the room code did not match: check it with the room's owner (or something between us and the room relays the connection)"))
        } catch {
            failRoomCode(ProtocolError(.codeExchange, "the room's CODE_REPLY could not be used: \(error)"))
        }
    }

    /// Ends the exchange: the server is told why (an ERROR frame) and the join fails with it.
    func failRoomCode(_ error: ProtocolError) {
        executor.assertOnExecutor()
        codeSteps.failed()
        initiator = nil
        link?.reject(error)
    }
}
