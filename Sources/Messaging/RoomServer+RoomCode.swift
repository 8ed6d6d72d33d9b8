import MessagingCore
import RoomCodeExchange
import TransportCore
import TransportPOSIX

/// The publisher's side of the room-code exchange (docs/PROTOCOL.md, *Room codes*): CPace as
/// the responder, bound to the TLS session (its exported `sid`) and to both keys (`CI`). The
/// order of the frames is `RoomCodeResponderSteps`'; this file counts each exchange as a guess
/// (`GuessLimiter`: refused with `too-many-attempts` past the limits) and runs the cryptography.
extension RoomServer {
    /// CODE_START: answers with CODE_REPLY (`Yb`, `Tb`), or refuses an exchange that cannot run.
    func answerRoomCode(share: [UInt8], associatedData: [UInt8], from member: Member) {
        scheduler.assertOnExecutor()
        guard let code = options.roomCode, let session = member.link.connection.secureSession, let ownKey = session.localKey else {
            member.codeSteps.failed()
            return member.link.reject(ProtocolError(.codeExchange,
                "a room code is checked only inside TLS, and this connection is plaintext: join without --allow-plaintext"))
        }
        // By host (an IPv6 /64 is one host); a key already listed counts against itself only.
        let listed = options.members?.listing(for: session.peerKey) != nil
        switch guesses.begin(address: codeHost(member), key: session.peerKey.full, listed: listed, at: scheduler.now) {
        case .refused(let error):
            member.codeSteps.failed()
            return member.link.reject(error)
        case .allowed(let attempt):
            member.codeAttempt = attempt
        }
        do {
            let responder = try CPace.Responder(code: code,
                                                channelIdentifier: CPace.channelIdentifier(initiatorKey: session.peerKey, responderKey: ownKey),
                                                sessionID: session.roomCodeSessionID, associatedData: Message.RoomCodeSizes.associatedData)
            let tag = try responder.receive(initiatorShare: share, initiatorAssociatedData: associatedData)
            member.responder = responder
            member.link.send(.codeReply(share: responder.share, tag: tag, associatedData: responder.associatedData))
        } catch {
            member.codeSteps.failed()
            roomCodeFailed(member, "its CODE_START could not be used (\(error))")
            member.link.reject(ProtocolError(.codeExchange, "the room-code exchange could not go on: \(error)"))
        }
    }

    /// The host `member`'s guess is charged to (`SocketEndpoint.codeHostKey`): for a link-local
    /// peer, its neighbour entry is read again and compared with the read at accept
    /// (`NeighbourAttribution`). When the entry was not read at accept (its interface is not
    /// known) it counts by exact address; when the table cannot be read, by exact address too,
    /// and the operator is told once.
    func codeHost(_ member: Member) -> String {
        guard let peer = member.link.connection.peer else { return member.host }
        let v4 = peer.address.unmappedIPv4 ?? (peer.address.family == .ipv4 ? peer.address : nil)
        guard v4?.isLinkLocal ?? peer.address.isLinkLocal else { return member.host }
        do {
            guard let accepted = try member.neighbour?.get() else { return peer.codeHostKey(.exactAddress) }
            return peer.codeHostKey(try NeighbourTable.attribution(of: accepted))
        } catch {
            if !neighbourTableFailed {
                neighbourTableFailed = true
                onEvent(.note("the kernel's neighbour table could not be read (\(error)), so room-code tries from link-local peers are counted per address, not per machine"))
            }
            return peer.codeHostKey(.exactAddress)
        }
    }

    /// CODE_CONFIRM: checks `Ta`; a wrong one is a failed attempt, answered `wrong-room-code`.
    func checkRoomCode(tag: [UInt8], from member: Member) {
        scheduler.assertOnExecutor()
        guard let responder = member.responder else {
            member.codeSteps.checked(false)
            return member.link.reject(ProtocolError(.codeExchange, "CODE_CONFIRM came with no exchange under way"))
        }
        member.responder = nil
        do {
            try responder.confirm(initiatorTag: tag).wipe()
            member.codeSteps.checked(true)
            if let attempt = member.codeAttempt { guesses.succeeded(attempt) }
        } catch {
            member.codeSteps.checked(false)
            roomCodeFailed(member, "its confirmation did not match (\(error))")
            member.link.reject(ProtocolError(.wrongRoomCode,
                "the room code did not match: check it with the room's owner (or something between us relays the connection)"))
        }
    }

    /// Reports a failed attempt (limited: a flood is counted, not printed line by line).
    func roomCodeFailed(_ member: Member, _ reason: String) {
        scheduler.assertOnExecutor()
        if codeFailures.admit() {
            onEvent(.roomCodeFailed(peer: member.peer, key: member.link.connection.secureSession?.peerKey, reason: reason))
        }
    }
}
