/// Every frame type of protocol version 1, decoded (docs/PROTOCOL.md).
public enum Message: Sendable, Hashable {
    case hello(Hello)
    /// The name the server gave this client.
    case welcome(name: String)
    case goodbye(reason: String)
    /// `code` is kept raw: a newer peer may send codes this version does not know.
    case error(code: UInt16, message: String)
    case ping(token: UInt64)
    case pong(token: UInt64)
    /// `to` empty: everyone. From a client, `from` is ignored.
    case text(from: String, to: String, text: String)
    case who
    case presence(PresenceKind, names: [String])
    /// PRESENCE between peers that both advertised `.memberKeys`: each name with the key its
    /// member (or the server) proved, when it has one. Same frame type as `presence`; which
    /// of the two a frame decodes to depends on the capabilities (see `init(decoding:memberKeys:)`).
    case presenceWithKeys(PresenceKind, members: [PresenceMember])
    /// Client → server, with `.acknowledgedText`: the TEXT frames that follow are numbered
    /// `next`, `next + 1`, ... in this client's `session` (which outlives connections).
    case session(id: UInt64, next: UInt64)
    /// Server → client: every TEXT numbered below `through` was handled (relayed once).
    case acknowledged(through: UInt64)
    /// Server → client, with `.history`: a line said to the whole room before this client
    /// joined, at `time` (milliseconds since 1970 UTC, the server's clock).
    case history(time: UInt64, from: String, text: String)
    case fileOffer(FileOffer)
    case fileAccept(id: UInt32, offset: UInt64)
    /// `data` is the payload after the id, copied once out of the frame decoder's buffer
    /// (`FrameDecoder.nextMessage`); it reaches the disk without another copy.
    case fileChunk(id: UInt32, data: ArraySlice<UInt8>)
    /// The sender's last frame of a file. `digest` (the SHA-256 of the whole file, 32 bytes)
    /// is present between peers that both advertised `.streamedFiles`, whose offers carry a
    /// resume tag instead of the digest; nil otherwise.
    case fileEnd(id: UInt32, digest: [UInt8]?)
    case fileResult(id: UInt32, status: FileStatus, message: String)
    /// Client → server, with `.relayedFiles`: a file for the member `to`, which the server
    /// relays; answered like a `FILE_OFFER` (the server stands in for the receiver).
    case fileOfferTo(FileOffer, to: String)
    /// Server → client, with `.relayedFiles`: a file from the member `from`, relayed by the
    /// server; answered like a `FILE_OFFER`. `host` is the server's tag for the sender's host
    /// (a keyed hash the sender cannot choose): with the server's address and `from`, what
    /// the recipient keys the partial data by.
    case fileOfferFrom(FileOffer, from: String, host: UInt64)
    /// Sender → receiver, with `.relayedFiles`: the transfer `id` (one the sender offered) is
    /// over without a result, for `reason`; data received so far is kept for resuming.
    case fileCancel(id: UInt32, reason: String)
    /// Server → sender, with `.relayedFiles`: the relayed transfer `id` (one the sender
    /// offered) may carry data up to offset `through` of the file; none goes beyond it.
    case fileCredit(id: UInt32, through: UInt64)
    /// Client → server, inside TLS, before the client's HELLO: the room-code exchange's first
    /// message (CPace `Ya`, exactly 32 bytes, and `ADa`, at most 1024 bytes).
    case codeStart(share: [UInt8], associatedData: [UInt8])
    /// Server → client: the answer (CPace `Yb`, 32 bytes; `Tb`, 64 bytes; `ADb`, at most 1024).
    case codeReply(share: [UInt8], tag: [UInt8], associatedData: [UInt8])
    /// Client → server: the client's confirmation (CPace `Ta`, exactly 64 bytes), sent only
    /// once the server's tag checked out; the client's HELLO follows.
    case codeConfirm(tag: [UInt8])

    /// Sizes in the room-code frames: a share, a confirmation tag, the most associated data.
    public enum RoomCodeSizes {
        public static let share = 32
        public static let tag = 64
        public static let maximumAssociatedData = 1024
        /// The associated data svc sends on both sides (`ADa`, `ADb`): the exchange's version,
        /// authenticated by the transcript. Any data within the bound is accepted from a peer.
        public static let associatedData: [UInt8] = Array("p2pm-room-code/1".utf8)
    }

    public struct Hello: Sendable, Hashable {
        public static let magic: [UInt8] = Array("P2PM".utf8)
        public static let currentVersion: UInt16 = 1

        public var version: UInt16
        public var capabilities: Capabilities
        public var name: String

        public init(version: UInt16 = Hello.currentVersion, capabilities: Capabilities = .all, name: String) {
            self.version = version
            self.capabilities = capabilities
            self.name = name
        }
    }

    public struct Capabilities: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let rooms = Capabilities(rawValue: 1)
        public static let files = Capabilities(rawValue: 2)
        public static let resume = Capabilities(rawValue: 4)
        /// SESSION and ACK: text survives a broken connection exactly once.
        public static let acknowledgedText = Capabilities(rawValue: 8)
        /// FILE_OFFER_TO, FILE_OFFER_FROM, FILE_CANCEL and FILE_CREDIT: files between members, relayed.
        public static let relayedFiles = Capabilities(rawValue: 16)
        /// HISTORY: the room's last lines for a member who just joined.
        public static let history = Capabilities(rawValue: 32)
        /// PRESENCE entries carry each member's key (`presenceWithKeys`), when both sides have it.
        public static let memberKeys = Capabilities(rawValue: 64)
        /// Files are offered before they are hashed, when both sides have it: the offer's
        /// `digest` field is the sender's resume tag, and FILE_END carries the SHA-256.
        public static let streamedFiles = Capabilities(rawValue: 128)
        public static let all: Capabilities = [.rooms, .files, .resume, .acknowledgedText, .relayedFiles, .history, .memberKeys,
                                               .streamedFiles]
    }

    public enum PresenceKind: UInt8, Sendable, Hashable {
        case list = 0, joined = 1, left = 2
    }

    /// One entry of `presenceWithKeys`: a name and the SHA-256 of its holder's public key
    /// (the bytes of a `PublicKeyFingerprint`), nil for a member without a key (plaintext).
    public struct PresenceMember: Sendable, Hashable {
        public var name: String
        /// 32 bytes, or nil.
        public let key: [UInt8]?

        /// A `key` of any length but 32 is taken as none.
        public init(name: String, key: [UInt8]?) {
            self.name = name
            self.key = key?.count == PresenceMember.keyBytes ? key : nil
        }

        /// Bytes of a key on the wire.
        public static let keyBytes = 32
    }

    public struct FileOffer: Sendable, Hashable {
        public var id: UInt32
        public var size: UInt64
        /// SHA-256 of the whole file; between peers with `.streamedFiles`, the sender's resume
        /// tag for it instead (32 bytes either way; the SHA-256 then comes with FILE_END).
        public var digest: [UInt8]
        public var name: String

        public init(id: UInt32, size: UInt64, digest: [UInt8], name: String) {
            self.id = id
            self.size = size
            self.digest = digest
            self.name = name
        }
    }

    public enum FileStatus: UInt8, Sendable, Hashable {
        case stored = 0, checksumMismatch = 1, refused = 2, writeFailed = 3
    }

    /// The most bytes of UTF-8 in a name: HELLO, WELCOME, TEXT `from` and `to`, PRESENCE.
    public static let maximumNameBytes = 255
    /// The most bytes of UTF-8 in a TEXT's text (one line of a chat, not a file).
    public static let maximumTextBytes = 65_536
    /// The most bytes of UTF-8 in a GOODBYE reason, an ERROR or FILE_RESULT message, and a
    /// FILE_OFFER name.
    public static let maximumNoteBytes = 4096

    enum Kind: UInt16 {
        case hello = 0x01, welcome = 0x02, goodbye = 0x03, error = 0x04, ping = 0x05, pong = 0x06
        case codeStart = 0x07, codeReply = 0x08, codeConfirm = 0x09
        case text = 0x10, who = 0x11, presence = 0x12, session = 0x13, acknowledged = 0x14, history = 0x15
        case fileOffer = 0x20, fileAccept = 0x21, fileChunk = 0x22, fileEnd = 0x23, fileResult = 0x24
        case fileOfferTo = 0x25, fileOfferFrom = 0x26, fileCancel = 0x27, fileCredit = 0x28
    }

    /// Decodes a frame.
    /// - Parameter memberKeys: both sides advertised `.memberKeys`: a PRESENCE frame carries
    ///   keys and decodes to `presenceWithKeys` (else to `presence`).
    /// - Throws: `ProtocolError` `.unknownType`, `.malformedFrame` (bad layout or flags set),
    ///   or `.badMagic` for a `HELLO` from something else.
    public init(decoding frame: Frame, memberKeys: Bool = false) throws(ProtocolError) {
        self = try frame.payload.withUnsafeBufferPointer { payload throws(ProtocolError) in
            try Message(type: frame.type, flags: frame.flags, payload: payload, memberKeys: memberKeys)
        }
    }

    /// Decodes a frame's fields, its payload read where it is (`FrameDecoder.nextMessage`
    /// reads it from the decoder's buffer); nothing of `payload` outlives the call.
    init(type: UInt16, flags: UInt16, payload: UnsafeBufferPointer<UInt8>, memberKeys: Bool) throws(ProtocolError) {
        guard let kind = Kind(rawValue: type) else {
            throw ProtocolError(.unknownType, "frame type 0x\(String(type, radix: 16)) is not part of protocol version 1")
        }
        guard flags == 0 else {
            throw ProtocolError(.malformedFrame, "\(kind) frame has flags 0x\(String(flags, radix: 16)); version 1 uses none")
        }
        var reader = PayloadReader(payload, kind: kind)
        switch kind {
        case .hello:
            guard try reader.raw(4, "magic") == Hello.magic else {
                throw ProtocolError(.badMagic, "this is not a p2pipp peer (the HELLO does not start with P2PM)")
            }
            let version = try reader.integer(UInt16.self, "version")
            let capabilities = Capabilities(rawValue: try reader.integer(UInt32.self, "capabilities"))
            self = .hello(Hello(version: version, capabilities: capabilities,
                                name: try reader.string("name", limit: Message.maximumNameBytes, code: .invalidName)))
        case .welcome: self = .welcome(name: try reader.string("name", limit: Message.maximumNameBytes))
        case .goodbye: self = .goodbye(reason: try reader.restText("reason", limit: Message.maximumNoteBytes))
        case .error:
            let code = try reader.integer(UInt16.self, "code")
            self = .error(code: code, message: try reader.restText("message", limit: Message.maximumNoteBytes))
        case .ping: self = .ping(token: try reader.integer(UInt64.self, "token"))
        case .pong: self = .pong(token: try reader.integer(UInt64.self, "token"))
        case .text:
            let from = try reader.string("from", limit: Message.maximumNameBytes)
            let to = try reader.string("to", limit: Message.maximumNameBytes)
            self = .text(from: from, to: to, text: try reader.restText("text", limit: Message.maximumTextBytes))
        case .who: self = .who
        case .presence:
            let rawKind = try reader.integer(UInt8.self, "kind")
            guard let presenceKind = PresenceKind(rawValue: rawKind) else {
                throw ProtocolError(.malformedFrame, "PRESENCE kind \(rawKind) is not 0, 1 or 2")
            }
            let count = try reader.integer(UInt16.self, "count")
            if memberKeys {
                var members: [PresenceMember] = []
                for _ in 0..<count {
                    let name = try reader.string("names", limit: Message.maximumNameBytes)
                    let length = try reader.integer(UInt8.self, "key length")
                    guard length == 0 || Int(length) == PresenceMember.keyBytes else {
                        throw ProtocolError(.malformedFrame, "PRESENCE key length \(length) is neither 0 nor 32")
                    }
                    let key = length == 0 ? nil : try reader.raw(PresenceMember.keyBytes, "key")
                    members.append(PresenceMember(name: name, key: key))
                }
                self = .presenceWithKeys(presenceKind, members: members)
            } else {
                var names: [String] = []
                for _ in 0..<count { names.append(try reader.string("names", limit: Message.maximumNameBytes)) }
                self = .presence(presenceKind, names: names)
            }
        case .session:
            let id = try reader.integer(UInt64.self, "id")
            self = .session(id: id, next: try reader.integer(UInt64.self, "next"))
        case .acknowledged: self = .acknowledged(through: try reader.integer(UInt64.self, "through"))
        case .history:
            let time = try reader.integer(UInt64.self, "time")
            let from = try reader.string("from", limit: Message.maximumNameBytes)
            self = .history(time: time, from: from, text: try reader.restText("text", limit: Message.maximumTextBytes))
        case .fileOffer:
            let id = try reader.integer(UInt32.self, "id")
            let size = try reader.integer(UInt64.self, "size")
            let digest = try reader.raw(32, "digest")
            self = .fileOffer(FileOffer(id: id, size: size, digest: digest, name: try reader.string("name", limit: Message.maximumNoteBytes)))
        case .fileAccept:
            let id = try reader.integer(UInt32.self, "id")
            self = .fileAccept(id: id, offset: try reader.integer(UInt64.self, "offset"))
        case .fileChunk:
            let id = try reader.integer(UInt32.self, "id")
            self = .fileChunk(id: id, data: reader.rest())
        case .fileEnd:
            let id = try reader.integer(UInt32.self, "id")
            // The digest is there or not at all: any other length is left over and malformed.
            self = .fileEnd(id: id, digest: reader.remaining == 32 ? try reader.raw(32, "digest") : nil)
        case .fileResult:
            let id = try reader.integer(UInt32.self, "id")
            let rawStatus = try reader.integer(UInt8.self, "status")
            guard let status = FileStatus(rawValue: rawStatus) else {
                throw ProtocolError(.malformedFrame, "FILE_RESULT status \(rawStatus) is not 0 to 3")
            }
            self = .fileResult(id: id, status: status, message: try reader.restText("message", limit: Message.maximumNoteBytes))
        case .fileOfferTo, .fileOfferFrom:
            let id = try reader.integer(UInt32.self, "id")
            let size = try reader.integer(UInt64.self, "size")
            let digest = try reader.raw(32, "digest")
            let member = try reader.string(kind == .fileOfferTo ? "to" : "from", limit: Message.maximumNameBytes)
            let host = kind == .fileOfferFrom ? try reader.integer(UInt64.self, "host") : 0
            let offer = FileOffer(id: id, size: size, digest: digest, name: try reader.string("name", limit: Message.maximumNoteBytes))
            self = kind == .fileOfferTo ? .fileOfferTo(offer, to: member) : .fileOfferFrom(offer, from: member, host: host)
        case .fileCancel:
            let id = try reader.integer(UInt32.self, "id")
            self = .fileCancel(id: id, reason: try reader.restText("reason", limit: Message.maximumNoteBytes))
        case .fileCredit:
            let id = try reader.integer(UInt32.self, "id")
            self = .fileCredit(id: id, through: try reader.integer(UInt64.self, "through"))
        case .codeStart, .codeReply, .codeConfirm:
            self = try Message(roomCodeFrame: kind, payload)
            return
        }
        try reader.end()
    }

    /// The frame that carries this message.
    public var frame: Frame {
        var writer = PayloadWriter()
        let kind = writePayload(&writer)
        return Frame(type: kind.rawValue, payload: writer.bytes)
    }

    /// Appends this message's frame, header and payload, to `buffer`: the same bytes as
    /// `frame.encode(into:)` without building the frame (no allocation when `buffer` has room).
    /// - Returns: false, leaving `buffer` as it was, when the payload would pass
    ///   `Frame.maximumPayload` (the decoder's limits keep anything relayed far below it).
    /// Borrowing: `self`'s strings are read where they are (matching `self` as a copy cost a
    /// retain and a release of each, per message sent).
    @discardableResult
    public borrowing func encode(into buffer: inout [UInt8]) -> Bool {
        switch self {
        case .text(let from, let to, let text):
            // What every room sends most, in one append and one copy of each field.
            if let appended = PayloadWriter.appendTextFrame(type: Kind.text.rawValue, from: from, to: to, text: text, into: &buffer) {
                return appended
            }
        default: break
        }
        let headerStart = buffer.count
        buffer.appendBigEndian(UInt64.zero) // the header, written once the payload's length is known
        var writer = PayloadWriter()
        swap(&writer.bytes, &buffer)
        let kind = writePayload(&writer)
        swap(&writer.bytes, &buffer)
        let length = buffer.count - headerStart - Frame.headerSize
        guard length <= Frame.maximumPayload else {
            buffer.removeSubrange(headerStart...)
            return false
        }
        let header = UInt64(length) << 32 | UInt64(kind.rawValue) << 16
        for index in 0..<Frame.headerSize {
            buffer[headerStart + index] = UInt8(truncatingIfNeeded: header >> (56 - 8 * index))
        }
        return true
    }

    /// Writes the payload; returns the frame type.
    private func writePayload(_ writer: inout PayloadWriter) -> Kind {
        let kind: Kind
        switch self {
        case .hello(let hello):
            kind = .hello
            writer.raw(Hello.magic)
            writer.integer(hello.version)
            writer.integer(hello.capabilities.rawValue)
            writer.string(hello.name)
        case .welcome(let name): kind = .welcome; writer.string(name)
        case .goodbye(let reason): kind = .goodbye; writer.raw(reason.utf8)
        case .error(let code, let message): kind = .error; writer.integer(code); writer.raw(message.utf8)
        case .ping(let token): kind = .ping; writer.integer(token)
        case .pong(let token): kind = .pong; writer.integer(token)
        case .text(let from, let to, let text):
            kind = .text
            writer.string(from)
            writer.string(to)
            writer.raw(text.utf8)
        case .who: kind = .who
        case .presence(let presenceKind, let names):
            kind = .presence
            writer.integer(presenceKind.rawValue)
            writer.integer(UInt16(min(names.count, Int(UInt16.max))))
            names.prefix(Int(UInt16.max)).forEach { writer.string($0) }
        case .presenceWithKeys(let presenceKind, let members):
            kind = .presence
            writer.integer(presenceKind.rawValue)
            writer.integer(UInt16(min(members.count, Int(UInt16.max))))
            for member in members.prefix(Int(UInt16.max)) {
                writer.string(member.name)
                writer.integer(UInt8(member.key == nil ? 0 : PresenceMember.keyBytes))
                if let key = member.key { writer.raw(key) }
            }
        case .session(let id, let next): kind = .session; writer.integer(id); writer.integer(next)
        case .acknowledged(let through): kind = .acknowledged; writer.integer(through)
        case .history(let time, let from, let text):
            kind = .history
            writer.integer(time)
            writer.string(from)
            writer.raw(text.utf8)
        case .fileOffer(let offer):
            kind = .fileOffer
            writer.integer(offer.id)
            writer.integer(offer.size)
            writer.raw(offer.digest)
            writer.string(offer.name)
        case .fileAccept(let id, let offset): kind = .fileAccept; writer.integer(id); writer.integer(offset)
        case .fileChunk(let id, let data): kind = .fileChunk; writer.integer(id); writer.raw(data)
        case .fileEnd(let id, let digest): kind = .fileEnd; writer.integer(id); if let digest { writer.raw(digest) }
        case .fileResult(let id, let status, let message):
            kind = .fileResult
            writer.integer(id)
            writer.integer(status.rawValue)
            writer.raw(message.utf8)
        case .fileOfferTo(let offer, let member), .fileOfferFrom(let offer, let member, _):
            if case .fileOfferTo = self { kind = .fileOfferTo } else { kind = .fileOfferFrom }
            writer.integer(offer.id)
            writer.integer(offer.size)
            writer.raw(offer.digest)
            writer.string(member)
            if case .fileOfferFrom(_, _, let host) = self { writer.integer(host) }
            writer.string(offer.name)
        case .fileCancel(let id, let reason): kind = .fileCancel; writer.integer(id); writer.raw(reason.utf8)
        case .fileCredit(let id, let through): kind = .fileCredit; writer.integer(id); writer.integer(through)
        case .codeStart(let share, let associatedData): kind = .codeStart; writer.raw(share); writer.raw(associatedData)
        case .codeReply(let share, let tag, let associatedData):
            kind = .codeReply
            writer.raw(share)
            writer.raw(tag)
            writer.raw(associatedData)
        case .codeConfirm(let tag): kind = .codeConfirm; writer.raw(tag)
        }
        return kind
    }

    /// The 12 bytes that precede `dataCount` bytes of data in a `FILE_CHUNK` frame, so that a
    /// sender can send the data from where it already is, without building the message.
    public static func fileChunkHeader(id: UInt32, dataCount: Int) -> [UInt8] {
        var header: [UInt8] = []
        header.reserveCapacity(12)
        header.appendBigEndian(UInt32(dataCount + 4))
        header.appendBigEndian(Kind.fileChunk.rawValue)
        header.appendBigEndian(UInt16(0))
        header.appendBigEndian(id)
        return header
    }

    /// PRESENCE messages that together carry `names`, each within the frame limit (a name is
    /// cut to `maximumNameBytes`, at most 65,535 names go in one frame).
    public static func presence(_ kind: PresenceKind, splitting names: [String]) -> [Message] {
        var messages: [Message] = []
        var batch: [String] = []
        var size = 3
        for name in names {
            var name = Substring(name)
            while name.utf8.count > maximumNameBytes { name = name.dropLast() }
            if size + 2 + name.utf8.count > Frame.maximumPayload || batch.count == Int(UInt16.max) {
                messages.append(.presence(kind, names: batch))
                batch = []
                size = 3
            }
            batch.append(String(name))
            size += 2 + name.utf8.count
        }
        if !batch.isEmpty || messages.isEmpty { messages.append(.presence(kind, names: batch)) }
        return messages
    }

    /// `presenceWithKeys` messages that together carry `members`, split as `presence(_:splitting:)`
    /// splits names.
    public static func presenceWithKeys(_ kind: PresenceKind, splitting members: [PresenceMember]) -> [Message] {
        var messages: [Message] = []
        var batch: [PresenceMember] = []
        var size = 3
        for var member in members {
            var name = Substring(member.name)
            while name.utf8.count > maximumNameBytes { name = name.dropLast() }
            member.name = String(name)
            let entrySize = 2 + name.utf8.count + 1 + (member.key?.count ?? 0)
            if size + entrySize > Frame.maximumPayload || batch.count == Int(UInt16.max) {
                messages.append(.presenceWithKeys(kind, members: batch))
                batch = []
                size = 3
            }
            batch.append(member)
            size += entrySize
        }
        if !batch.isEmpty || messages.isEmpty { messages.append(.presenceWithKeys(kind, members: batch)) }
        return messages
    }

    /// An `ERROR` message for a protocol violation.
    public static func error(_ error: ProtocolError) -> Message {
        .error(code: error.code.rawValue, message: error.message)
    }
}
