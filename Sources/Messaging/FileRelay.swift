import MessagingCore
import TransportCore

/// Files between members, passed through the server (docs/PROTOCOL.md, "Files between
/// members"): a member's `FILE_OFFER_TO` becomes a `FILE_OFFER_FROM` to the recipient under an
/// id the server chooses on the recipient's connection; answers and data are passed on, each
/// mapped back to the id of the connection it goes to. Members never see each other's ids,
/// so a member can name only its own transfers.
///
/// What it may cost is bounded: `Limits` caps the transfers at once (per sender, per
/// recipient, per sender's host, in all); at most one chunk per sending member waits here
/// while the recipient's outbox is above its mark, and the sender is not read meanwhile
/// (back-pressure); a transfer that makes no progress within `idleTimeout` is ended on both
/// sides.
///
/// - Important: every method runs on the room's queue (the members' links' scheduler).
final class FileRelay {
    /// What members may spend on relayed files.
    struct Limits: Sendable, Hashable {
        /// Relayed files one member may be sending at once, together with its files to the
        /// server's inbox (the inbox's `transfersPerMember`).
        var fromMember = 4
        /// Relayed files one member may be receiving at once.
        var toMember = 4
        /// Relayed files the members of one host may be sending at once.
        var fromHost = 16
        /// Relayed files in the whole room at once.
        var transfers = 32
        /// A relayed file that brings less than `minimumProgress` bytes (or what it still
        /// needs) within this time, or gets no answer to its offer or to its end, is ended.
        var idleTimeout: Duration = .seconds(60)
        var minimumProgress: UInt64 = 1 << 20
        /// Data is passed on only while the recipient's outbox stays below this; beyond it,
        /// the chunk waits here and the sender is not read until the outbox drains.
        var recipientOutboxMark = 2 << 20
    }

    /// A member as the relay sees it.
    private final class Endpoint {
        let link: PeerLink
        let name: String
        let host: String
        let acceptsRelayed: Bool
        /// Ids this connection's relayed offers take: the upper half, so that they never meet
        /// the server's own offers (`RoomServer` gives those the lower half).
        var nextID: UInt32 = Endpoint.firstID
        static let firstID: UInt32 = 1 << 31
        /// Transfers that ended here recently, as (sender's side?, id): frames already on their
        /// way for them are ignored rather than answered with an error. The last 16 only.
        var recentlyEnded: [(sending: Bool, id: UInt32)] = []
        init(link: PeerLink, name: String, host: String, acceptsRelayed: Bool) {
            self.link = link
            self.name = name
            self.host = host
            self.acceptsRelayed = acceptsRelayed
        }
    }

    private final class Transfer {
        enum State { case offered, accepted, ending }
        let sender: Int
        let senderID: UInt32
        let recipient: Int
        let recipientID: UInt32
        let size: UInt64
        let name: String
        var state = State.offered
        /// Bytes of the file accounted for: the accepted offset, plus what was passed on.
        var position: UInt64 = 0
        /// A chunk waiting for the recipient's outbox to drain (the sender is held meanwhile).
        var pending: [UInt8]?
        /// Bumped on every change of state; the watchdog compares it with what it saw.
        var step = 0
        /// The watchdog's next check, cancelled when the transfer ends (so that a flood of
        /// offers ended at once leaves no timers behind).
        var watchdog: (any ScheduledWork)?
        init(sender: Int, senderID: UInt32, recipient: Int, recipientID: UInt32, size: UInt64, name: String) {
            self.sender = sender
            self.senderID = senderID
            self.recipient = recipient
            self.recipientID = recipientID
            self.size = size
            self.name = name
        }
    }

    private struct Slot: Hashable {
        let member: Int
        let id: UInt32
    }

    let limits: Limits
    private let scheduler: any Scheduler
    private var endpoints: [Int: Endpoint] = [:]
    private var bySender: [Slot: Transfer] = [:]
    private var byRecipient: [Slot: Transfer] = [:]
    private var sendingCount: [Int: Int] = [:]
    private var receivingCount: [Int: Int] = [:]
    private var hostCount: [String: Int] = [:]

    init(limits: Limits, scheduler: any Scheduler) {
        self.limits = limits
        self.scheduler = scheduler
    }

    /// Relayed transfers under way, for tests and the fuzzer's invariants.
    var count: Int { bySender.count }

    /// Relayed files `member` is sending now.
    func sending(from member: Int) -> Int { sendingCount[member, default: 0] }

    /// Whether `id` is a relayed file `member` is sending (its own ids: a `FILE_OFFER` with it
    /// is a duplicate).
    func isSending(_ id: UInt32, from member: Int) -> Bool { bySender[Slot(member: member, id: id)] != nil }

    /// A member completed its handshake.
    func joined(_ member: Int, link: PeerLink, name: String, host: String, capabilities: Message.Capabilities) {
        endpoints[member] = Endpoint(link: link, name: name, host: host, acceptsRelayed: capabilities.contains(.relayedFiles))
    }

    /// A member left: the other side of each of its transfers is told, and the transfer forgotten.
    func left(_ member: Int) {
        guard let endpoint = endpoints[member] else { return }
        for transfer in bySender.values where transfer.sender == member {
            end(transfer, toSender: nil, toRecipient: "\(endpoint.name) left the room")
        }
        for transfer in byRecipient.values where transfer.recipient == member {
            end(transfer, toSender: "\(endpoint.name) left the room before the file was stored; send it again to resume once \(endpoint.name) is back",
                toRecipient: nil)
        }
        endpoints[member] = nil
        sendingCount[member] = nil
        receivingCount[member] = nil
    }

    /// A `FILE_OFFER_TO` from `member` for the member `recipient` (nil: nobody of that name).
    /// `otherTransfers` are the sender's files to the server's inbox, which count as well.
    func offer(_ offer: Message.FileOffer, from member: Int, to recipient: Int?, named name: String, otherTransfers: Int) {
        guard let sender = endpoints[member] else { return }
        func refuse(_ reason: String) {
            sender.link.send(.fileResult(id: offer.id, status: .refused, message: reason))
        }
        guard offer.id != 0, !isSending(offer.id, from: member) else {
            return refuse("transfer id \(offer.id) is already in use")
        }
        guard let recipient, let target = endpoints[recipient] else {
            return refuse("nobody called '\(name)' is in the room; /who lists the members")
        }
        guard recipient != member else { return refuse("you cannot send a file to yourself") }
        guard target.acceptsRelayed else {
            return refuse("\(target.name) cannot receive files from members: its program is too old (it does not announce relayed files)")
        }
        guard sending(from: member) + otherTransfers < limits.fromMember else {
            return refuse("you are sending \(limits.fromMember) files at once already; wait for one to finish")
        }
        guard receivingCount[recipient, default: 0] < limits.toMember else {
            return refuse("\(target.name) is receiving \(limits.toMember) files from members already; try again later")
        }
        guard hostCount[sender.host, default: 0] < limits.fromHost else {
            return refuse("members on your host are sending \(limits.fromHost) files at once already; try again later")
        }
        guard bySender.count < limits.transfers else {
            return refuse("the room is relaying \(limits.transfers) files already; try again later")
        }
        var id = target.nextID
        while byRecipient[Slot(member: recipient, id: id)] != nil { id = id == .max ? Endpoint.firstID : id + 1 }
        target.nextID = id == .max ? Endpoint.firstID : id + 1
        let transfer = Transfer(sender: member, senderID: offer.id, recipient: recipient, recipientID: id, size: offer.size, name: offer.name)
        var relayed = offer
        relayed.id = id
        guard target.link.send(.fileOfferFrom(relayed, from: sender.name)) else {
            return refuse("\(target.name) is leaving the room")
        }
        bySender[Slot(member: member, id: offer.id)] = transfer
        byRecipient[Slot(member: recipient, id: id)] = transfer
        sendingCount[member, default: 0] += 1
        receivingCount[recipient, default: 0] += 1
        hostCount[sender.host, default: 0] += 1
        watch(transfer, step: transfer.step, position: transfer.position)
    }

    /// Handles a file frame from `member` that belongs to a relayed transfer; returns false
    /// for every other frame (the member's own files, to the server).
    func handle(_ message: Message, from member: Int) -> Bool {
        switch message {
        case .fileAccept(let id, let offset):
            guard let transfer = byRecipient[Slot(member: member, id: id)] else { return wasRelayed(id, sending: false, by: member) }
            guard transfer.state == .offered, offset <= transfer.size else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_ACCEPT for id \(id) at \(offset) matches no offer waiting for an answer"))
                return true
            }
            transfer.state = .accepted
            transfer.position = offset
            transfer.step += 1
            endpoints[transfer.sender]?.link.send(.fileAccept(id: transfer.senderID, offset: offset))
        case .fileResult(let id, let status, let text):
            guard let transfer = byRecipient[Slot(member: member, id: id)] else { return wasRelayed(id, sending: false, by: member) }
            forget(transfer)
            endpoints[transfer.sender]?.link.send(.fileResult(id: transfer.senderID, status: status, message: text))
        case .fileChunk(let id, let data):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            guard transfer.state == .accepted, transfer.pending == nil else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id), which is not an accepted transfer still open"))
                return true
            }
            guard UInt64(data.count) <= transfer.size - transfer.position else {
                end(transfer, toSender: "more data than the \(transfer.size) bytes offered", toRecipient: "the sender sent more data than it offered")
                return true
            }
            transfer.position += UInt64(data.count)
            pass(data, of: transfer)
        case .fileEnd(let id):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            guard transfer.state == .accepted, transfer.pending == nil else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_END for id \(id), which is not an accepted transfer still open"))
                return true
            }
            transfer.state = .ending
            transfer.step += 1
            endpoints[transfer.recipient]?.link.send(.fileEnd(id: transfer.recipientID))
        case .fileCancel(let id, let reason):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            end(transfer, toSender: nil, toRecipient: reason)
        default:
            return false
        }
        return true
    }

    /// Whether `id` belonged to a relayed transfer of `member` that ended recently (its frame
    /// crossed the end on the way, and is dropped); false leaves the frame to the member's
    /// own files, which answer an unknown id with `file-protocol`.
    private func wasRelayed(_ id: UInt32, sending: Bool, by member: Int) -> Bool {
        endpoints[member]?.recentlyEnded.contains { $0.sending == sending && $0.id == id } ?? false
    }

    /// The bytes a chunk adds to an outbox besides its data: the frame header and the id.
    private static let chunkOverhead = Frame.headerSize + 4

    /// Passes a chunk on now, or keeps it and holds the sender until the recipient's outbox
    /// has room.
    private func pass(_ data: [UInt8], of transfer: Transfer) {
        guard let recipient = endpoints[transfer.recipient] else { return }
        if recipient.link.connection.bufferedByteCount + data.count + Self.chunkOverhead <= limits.recipientOutboxMark {
            recipient.link.send(.fileChunk(id: transfer.recipientID, data: data))
            return
        }
        transfer.pending = data
        endpoints[transfer.sender]?.link.holdReading(.relay)
        let member = transfer.recipient
        recipient.link.whenDrained(.relay) { [weak self] in self?.drained(member) }
    }

    /// The recipient's outbox emptied: the chunks waiting for it go, as far as there is room.
    private func drained(_ member: Int) {
        guard let recipient = endpoints[member] else { return }
        var waiting = false
        for transfer in byRecipient.values where transfer.recipient == member {
            guard let data = transfer.pending else { continue }
            guard recipient.link.connection.bufferedByteCount + data.count + Self.chunkOverhead <= limits.recipientOutboxMark else {
                waiting = true
                continue
            }
            transfer.pending = nil
            recipient.link.send(.fileChunk(id: transfer.recipientID, data: data))
            endpoints[transfer.sender]?.link.releaseReading(.relay)
        }
        if !waiting { recipient.link.whenDrained(.relay, nil) }
    }

    /// Ends a transfer within `idleTimeout` unless it moves on (a new state, or enough data).
    private func watch(_ transfer: Transfer, step: Int, position: UInt64) {
        transfer.watchdog = scheduler.schedule(after: limits.idleTimeout) { [weak self, weak transfer] in
            guard let self, let transfer, bySender[Slot(member: transfer.sender, id: transfer.senderID)] === transfer else { return }
            let wanted = max(1, min(limits.minimumProgress, transfer.size - min(position, transfer.size)))
            if transfer.step != step || transfer.position - min(position, transfer.position) >= wanted {
                return watch(transfer, step: transfer.step, position: transfer.position)
            }
            let recipient = endpoints[transfer.recipient]?.name ?? "the recipient"
            let sender = endpoints[transfer.sender]?.name ?? "the sender"
            let time = limits.idleTimeout.secondsText
            let reason = switch transfer.state {
            case .offered: "\(recipient) did not answer the offer within \(time)"
            case .ending: "\(recipient) did not confirm the file within \(time)"
            case .accepted where transfer.pending != nil: "\(recipient) took less than \(wanted) bytes in \(time)"
            case .accepted: "\(sender) sent less than \(wanted) bytes in \(time)"
            }
            end(transfer, toSender: reason + "; send it again to resume", toRecipient: reason)
        }
    }

    /// Ends a transfer: the sender gets `FILE_RESULT` refused and the recipient `FILE_CANCEL`
    /// (each only when given a reason: not the side that ended it).
    private func end(_ transfer: Transfer, toSender: String?, toRecipient: String?) {
        forget(transfer)
        if let toSender { endpoints[transfer.sender]?.link.send(.fileResult(id: transfer.senderID, status: .refused, message: toSender)) }
        if let toRecipient { endpoints[transfer.recipient]?.link.send(.fileCancel(id: transfer.recipientID, reason: toRecipient)) }
    }

    /// Removes a transfer from every index and count, and lets its sender be read again.
    private func forget(_ transfer: Transfer) {
        guard bySender.removeValue(forKey: Slot(member: transfer.sender, id: transfer.senderID)) != nil else { return }
        byRecipient[Slot(member: transfer.recipient, id: transfer.recipientID)] = nil
        func decrement<Key: Hashable>(_ counts: inout [Key: Int], _ key: Key) {
            let count = counts[key, default: 1] - 1
            counts[key] = count > 0 ? count : nil
        }
        decrement(&sendingCount, transfer.sender)
        decrement(&receivingCount, transfer.recipient)
        if let sender = endpoints[transfer.sender] {
            decrement(&hostCount, sender.host)
            remember(&sender.recentlyEnded, (true, transfer.senderID))
            if transfer.pending != nil { sender.link.releaseReading(.relay) }
        }
        transfer.pending = nil
        transfer.watchdog?.cancel()
        transfer.watchdog = nil
        if let recipient = endpoints[transfer.recipient] { remember(&recipient.recentlyEnded, (false, transfer.recipientID)) }
    }

    private func remember(_ ended: inout [(sending: Bool, id: UInt32)], _ entry: (Bool, UInt32)) {
        if ended.count >= 16 { ended.removeFirst() }
        ended.append(entry)
    }
}
