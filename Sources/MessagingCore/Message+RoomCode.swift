extension Message {
    /// Decodes CODE_START, CODE_REPLY and CODE_CONFIRM with exact lengths: a share is 32 bytes,
    /// a tag 64, associated data the rest of the frame and at most 1024 bytes.
    /// - Throws: `ProtocolError` `.codeExchange` (it ends the connection) for any other length.
    init(roomCodeFrame kind: Kind, _ payload: UnsafeBufferPointer<UInt8>) throws(ProtocolError) {
        let share = RoomCodeSizes.share
        let tag = RoomCodeSizes.tag
        let maximumData = RoomCodeSizes.maximumAssociatedData
        func length(_ name: String, _ fixed: Int, data: Bool) throws(ProtocolError) {
            guard payload.count >= fixed, payload.count - fixed <= (data ? maximumData : 0) else {
                let expected = data ? "\(fixed) to \(fixed + maximumData)" : "exactly \(fixed)"
                throw ProtocolError(.codeExchange, "\(name) has \(payload.count) bytes of payload; it must have \(expected)")
            }
        }
        switch kind {
        case .codeStart:
            try length("CODE_START", share, data: true)
            self = .codeStart(share: Array(payload[0..<share]), associatedData: Array(payload[share...]))
        case .codeReply:
            try length("CODE_REPLY", share + tag, data: true)
            self = .codeReply(share: Array(payload[0..<share]), tag: Array(payload[share..<(share + tag)]),
                              associatedData: Array(payload[(share + tag)...]))
        case .codeConfirm:
            try length("CODE_CONFIRM", tag, data: false)
            self = .codeConfirm(tag: Array(payload))
        default:
            throw ProtocolError(.codeExchange, "frame type 0x\(String(kind.rawValue, radix: 16)) is not part of the room-code exchange")
        }
    }
}
