extension Message {
    /// The frame's type as docs/PROTOCOL.md names it (`FILE_OFFER`), for error messages.
    public var typeName: String {
        switch self {
        case .hello: "HELLO"
        case .welcome: "WELCOME"
        case .goodbye: "GOODBYE"
        case .error: "ERROR"
        case .ping: "PING"
        case .pong: "PONG"
        case .text: "TEXT"
        case .who: "WHO"
        case .presence, .presenceWithKeys: "PRESENCE"
        case .session: "SESSION"
        case .acknowledged: "ACK"
        case .history: "HISTORY"
        case .fileOffer: "FILE_OFFER"
        case .fileAccept: "FILE_ACCEPT"
        case .fileChunk: "FILE_CHUNK"
        case .fileEnd: "FILE_END"
        case .fileResult: "FILE_RESULT"
        case .fileOfferTo: "FILE_OFFER_TO"
        case .fileOfferFrom: "FILE_OFFER_FROM"
        case .fileCancel: "FILE_CANCEL"
        case .fileCredit: "FILE_CREDIT"
        case .codeStart: "CODE_START"
        case .codeReply: "CODE_REPLY"
        case .codeConfirm: "CODE_CONFIRM"
        }
    }
}
