import MessagingCore
import TransportCore

/// Files between members, passed through the server (docs/PROTOCOL.md, "Files between
/// members"): a member's `FILE_OFFER_TO` becomes a `FILE_OFFER_FROM` to the recipient under an
/// id the server chooses on the recipient's connection; answers and data are passed on, each
/// mapped back to the id of the connection it goes to. Members never see each other's ids,
/// so a member can name only its own transfers.
///
/// What it may cost is bounded: `Limits` caps the transfers at once (per sender, per
/// recipient, per pair, per sender's host, in all); a sender may send a relayed file's data
/// only as far as the server granted it (`FILE_CREDIT`), and the server grants more only
/// while the recipient's outbox stays under its mark (at most one window per transfer beyond it)
/// (back-pressure without ever holding the sender's connection: its text and pings are read
/// all along); a transfer that passes on too little data within `idleTimeout` is ended on both
/// sides (only data counts: an answer or an end does not), and so is one whose sender ends it
/// before all of its data. When the room or a recipient is full, an offer from a host holding
/// fewer places takes the place of the transfer with the least progress from the host holding
/// the most, so that no host keeps the others out by holding places without sending; failing
/// that, any offer takes the place of the least-progress transfer that passed no data for
/// `idlePlace` (one machine can be many hosts).
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
        /// Relayed files the members of one host may be sending to one other member at once
        /// (so that one host, however many members it has, cannot take all of a recipient's
        /// places).
        var perPair = 2
        /// Relayed files the members of one host may be sending at once.
        var fromHost = 16
        /// Relayed files in the whole room at once.
        var transfers = 32
        /// A relayed file that passes on less than `minimumProgress` bytes of data (or what
        /// it still needs) within this time, counted from the offer and then from each check
        /// that saw enough, or gets no result after its end, is ended. Only data restarts the
        /// count: an answer to the offer or an end does not.
        var idleTimeout: Duration = .seconds(60)
        var minimumProgress: UInt64 = 1 << 20
        /// More data is granted (`FILE_CREDIT`) only while less than this waits in the
        /// recipient's outbox; with a window per transfer on top (`toMember` of them), what
        /// waits stays under the connection's 4 MiB outbox limit.
        var recipientOutboxMark = 1 << 20
        /// A transfer is granted up to this much beyond what it passed on: the most of its data
        /// that can wait in the server.
        var window: UInt64 = 512 << 10
        /// Credit is granted in steps of at least this (or the rest of the file), not after
        /// every small chunk.
        var minimumGrant: UInt64 = 64 << 10
    }

    /// A member as the relay sees it.
    private final class Endpoint {
        let link: PeerLink
        let name: String
        let host: String
        /// What its relayed offers carry as its host (`FileRelay.tag(host:)`).
        let hostTag: UInt64
        let acceptsRelayed: Bool
        /// Ids this connection's relayed offers take: the upper half, so that they never meet
        /// the server's own offers (`RoomServer` gives those the lower half).
        var nextID: UInt32 = Endpoint.firstID
        static let firstID: UInt32 = 1 << 31
        /// Transfers that ended here recently, as (sender's side?, id): frames already on their
        /// way for them are ignored rather than answered with an error. The last 16 only.
        var recentlyEnded = RecentIDs<RelayedID>()
        init(link: PeerLink, name: String, host: String, hostTag: UInt64, acceptsRelayed: Bool) {
            self.link = link
            self.name = name
            self.host = host
            self.hostTag = hostTag
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
        /// The SHA-256 its offer named (the sender does not stream, `.streamedFiles`), or nil
        /// (the offer named a resume tag, and the digest comes with `FILE_END`).
        let offeredDigest: [UInt8]?
        /// The recipient streams: its `FILE_END` carries the digest.
        let recipientStreams: Bool
        var state = State.offered
        /// Bytes of the file accounted for: the accepted offset, plus what was passed on.
        var position: UInt64 = 0
        /// How far the sender may send (the last `FILE_CREDIT`); from `position` on at first.
        var credit: UInt64 = 0
        /// Bytes of data passed on (not the accepted offset): the transfer's progress.
        var passed: UInt64 = 0
        /// The sender's host (its key in `hostCount`), kept should the sender leave first.
        let senderHost: String
        /// The order of offers: of transfers with equal progress, the newest gives way.
        let serial: UInt64
        /// When data last passed (or the offer came): a place that moves no data for
        /// `idlePlace` may go to anyone's offer.
        var lastData: ContinuousClock.Instant
        /// The watchdog's next check, cancelled when the transfer ends (so that a flood of
        /// offers ended at once leaves no timers behind).
        var watchdog: (any ScheduledWork)?
        init(sender: Int, senderID: UInt32, senderHost: String, recipient: Int, recipientID: UInt32, size: UInt64, name: String,
             offeredDigest: [UInt8]?, recipientStreams: Bool, serial: UInt64, at now: ContinuousClock.Instant) {
            self.offeredDigest = offeredDigest
            self.recipientStreams = recipientStreams
            self.lastData = now
            self.sender = sender
            self.senderHost = senderHost
            self.serial = serial
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
    private var offers: UInt64 = 0

    /// The key of the host tags: random, for this server's life.
    private let secret: [UInt8]

    init(limits: Limits, scheduler: any Scheduler) {
        self.limits = limits
        self.scheduler = scheduler
        var random = SystemRandomNumberGenerator()
        secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }

    /// The tag `FILE_OFFER_FROM` gives a sender's host: a hash of the host keyed with this
    /// server's secret, so a member cannot choose it (nor learn another's address from it),
    /// and every member on one host has the same.
    func tag(host: String) -> UInt64 {
        let hash = SHA256()
        hash.update(secret)
        hash.update(Array(host.utf8))
        return hash.finish().prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Relayed transfers under way, for tests and the fuzzer's invariants.
    var count: Int { bySender.count }

    /// Relayed files `member` is sending now.
    func sending(from member: Int) -> Int { sendingCount[member, default: 0] }

    /// Whether `id` is a relayed file `member` is sending (its own ids: a `FILE_OFFER` with it
    /// is a duplicate).
    func isSending(_ id: UInt32, from member: Int) -> Bool { bySender[Slot(member: member, id: id)] != nil }

    /// A member completed its handshake. `key` (its key's full form, nil without one) is what
    /// its files are tagged by for their recipients, instead of its host: another key on the
    /// same host cannot resume or cut short its partial files.
    func joined(_ member: Int, link: PeerLink, name: String, host: String, key: String?, capabilities: Message.Capabilities) {
        scheduler.assertOnExecutor()
        endpoints[member] = Endpoint(link: link, name: name, host: host, hostTag: tag(host: key.map { "key " + $0 } ?? host),
                                     acceptsRelayed: capabilities.contains(.relayedFiles))
    }

    /// A member left: the other side of each of its transfers is told, and the transfer forgotten.
    func left(_ member: Int) {
        scheduler.assertOnExecutor()
        guard let endpoint = endpoints[member] else { return }
        var recipients: Set<Int> = []
        for transfer in bySender.values where transfer.sender == member {
            end(transfer, toSender: nil, toRecipient: "\(endpoint.name) left the room")
            recipients.insert(transfer.recipient)
        }
        for transfer in byRecipient.values where transfer.recipient == member {
            end(transfer, toSender: "\(endpoint.name) left the room before the file was stored; send it again to resume once \(endpoint.name) is back",
                toRecipient: nil)
        }
        endpoints[member] = nil
        sendingCount[member] = nil
        receivingCount[member] = nil
        endpoint.link.whenDrained(.relay, nil)
        for recipient in recipients { grant(to: recipient) }
    }

    /// A `FILE_OFFER_TO` from `member` for the member `recipient` (nil: nobody of that name).
    /// `otherTransfers` are the sender's files to the server's inbox, which count as well.
    func offer(_ offer: Message.FileOffer, from member: Int, to recipient: Int?, named name: String, otherTransfers: Int) {
        scheduler.assertOnExecutor()
        guard let sender = endpoints[member] else { return }
        func refuse(_ reason: String) {
            sender.link.send(.fileResult(id: offer.id, status: .refused, message: reason))
        }
        guard offer.id != 0 else { return refuse("transfer id 0 is not valid: a sender numbers its transfers from 1") }
        guard !isSending(offer.id, from: member) else { return refuse("transfer id \(offer.id) is already in use") }
        guard let recipient, let target = endpoints[recipient] else {
            return refuse("nobody called '\(name)' is in the room; /who lists the members")
        }
        guard recipient != member else { return refuse("you cannot send a file to yourself") }
        guard target.acceptsRelayed else {
            return refuse("\(target.name) cannot receive files from members: its program is too old (it does not announce relayed files)")
        }
        // A streamed offer names no digest, which a recipient that does not stream would need.
        let senderStreams = sender.link.usesStreamedFiles
        guard !senderStreams || target.link.usesStreamedFiles else {
            return refuse("\(target.name) cannot receive files sent while they are read: its program is too old (it does not announce streamed files)")
        }
        guard sending(from: member) + otherTransfers < limits.fromMember else {
            return refuse("you are sending \(limits.fromMember) files at once already; wait for one to finish")
        }
        let toTarget = byRecipient.values.filter { $0.recipient == recipient }
        guard toTarget.count(where: { $0.senderHost == sender.host }) < limits.perPair else {
            return refuse("members on your host are sending \(limits.perPair) files to \(target.name) at once already; wait for one to finish")
        }
        guard hostCount[sender.host, default: 0] < limits.fromHost else {
            return refuse("members on your host are sending \(limits.fromHost) files at once already; try again later")
        }
        if toTarget.count >= limits.toMember {
            guard let place = placeToTake(among: toTarget, for: sender.host) else {
                return refuse("\(target.name) is receiving \(limits.toMember) files from members already; try again later")
            }
            give(place.transfer, reason: "\(target.name) is receiving \(limits.toMember) files from members, \(place.why)")
        } else if bySender.count >= limits.transfers {
            guard let place = placeToTake(among: Array(bySender.values), for: sender.host) else {
                return refuse("the room is relaying \(limits.transfers) files already; try again later")
            }
            give(place.transfer, reason: "the room is relaying \(limits.transfers) files, \(place.why)")
        }
        var id = target.nextID
        while byRecipient[Slot(member: recipient, id: id)] != nil { id = id == .max ? Endpoint.firstID : id + 1 }
        target.nextID = id == .max ? Endpoint.firstID : id + 1
        offers += 1
        let transfer = Transfer(sender: member, senderID: offer.id, senderHost: sender.host, recipient: recipient, recipientID: id,
                                size: offer.size, name: offer.name, offeredDigest: senderStreams ? nil : offer.digest,
                                recipientStreams: target.link.usesStreamedFiles, serial: offers, at: scheduler.now)
        var relayed = offer
        relayed.id = id
        guard target.link.send(.fileOfferFrom(relayed, from: sender.name, host: sender.hostTag)) else {
            return refuse("\(target.name) is leaving the room")
        }
        bySender[Slot(member: member, id: offer.id)] = transfer
        byRecipient[Slot(member: recipient, id: id)] = transfer
        sendingCount[member, default: 0] += 1
        receivingCount[recipient, default: 0] += 1
        hostCount[sender.host, default: 0] += 1
        watch(transfer, passed: 0)
    }

    /// A place that moves no data for this long goes to anyone's offer, whatever its host
    /// holds: one machine can be many hosts (each link-local address counts as one).
    static let idlePlace: Duration = .seconds(10)

    /// The transfer among `transfers` whose place an offer from `host` takes, and why: the one
    /// with the least progress (the newest of equals) from the host holding the most of them,
    /// if that host holds more than one more than `host` (so that places even out and are not
    /// taken back and forth); else the one with the least progress among those that passed no
    /// data for `idlePlace` (not one whose data all passed: its recipient is verifying it);
    /// nil when none may be taken.
    private func placeToTake(among transfers: [Transfer], for host: String) -> (transfer: Transfer, why: String)? {
        func leastProgress(_ candidates: [Transfer]) -> Transfer? {
            candidates.min { ($0.passed, UInt64.max - $0.serial) < ($1.passed, UInt64.max - $1.serial) }
        }
        var held: [String: Int] = [:]
        for transfer in transfers { held[transfer.senderHost, default: 0] += 1 }
        if let most = held.values.max(), most > held[host, default: 0] + 1,
           let transfer = leastProgress(transfers.filter { held[$0.senderHost] == most }) {
            return (transfer, "most of them from your host")
        }
        let now = scheduler.now
        let idle = transfers.filter { $0.state != .ending && now - $0.lastData >= Self.idlePlace }
        return leastProgress(idle).map { ($0, "and this one moved no data for \(Self.idlePlace.secondsText)") }
    }

    /// Ends `transfer` to make room for an offer from another host, telling both sides why.
    private func give(_ transfer: Transfer, reason: String) {
        end(transfer, toSender: reason + "; its place went to a file from another host; send it again to resume",
            toRecipient: "its place went to a file from another host")
        grant(to: transfer.recipient)
    }

    /// Handles a file frame from `member` that belongs to a relayed transfer; returns false
    /// for every other frame (the member's own files, to the server).
    func handle(_ message: Message, from member: Int) -> Bool {
        scheduler.assertOnExecutor()
        switch message {
        case .fileAccept(let id, let offset):
            guard let transfer = byRecipient[Slot(member: member, id: id)] else { return wasRelayed(id, sending: false, by: member) }
            guard transfer.state == .offered, offset <= transfer.size else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_ACCEPT for id \(id) at \(offset) matches no offer waiting for an answer"))
                return true
            }
            transfer.state = .accepted
            transfer.position = offset
            transfer.credit = offset
            endpoints[transfer.sender]?.link.send(.fileAccept(id: transfer.senderID, offset: offset))
            // The watchdog goes on counting from the offer: an answer is no progress. But a
            // streamed sender hashes the data before `offset` before it sends any: that first
            // wait is given time to read it (`FileTransfers.resumeAllowance`).
            if transfer.offeredDigest == nil && offset > 0 {
                transfer.watchdog?.cancel()
                watch(transfer, passed: transfer.passed, within: FileTransfers.resumeAllowance(skipping: offset, idleTimeout: limits.idleTimeout))
            }
            grant(to: member)
        case .fileResult(let id, let status, let text):
            guard let transfer = byRecipient[Slot(member: member, id: id)] else { return wasRelayed(id, sending: false, by: member) }
            forget(transfer)
            // A streaming recipient answers an offer stored at once with the digest it holds
            // before the name; an older sender offered the digest itself and wants the name.
            let stripped = status == .stored && transfer.state == .offered && transfer.offeredDigest != nil && transfer.recipientStreams
                ? FileTransfers.parseStoredAtOnceAnswer(text)?.name : nil
            endpoints[transfer.sender]?.link.send(.fileResult(id: transfer.senderID, status: status, message: stripped ?? text))
            grant(to: member)
        case .fileChunk(let id, let data):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            guard transfer.state == .accepted else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id), which is not an accepted transfer still open"))
                return true
            }
            guard !data.isEmpty else {
                // Passed on, it would be refused by the recipient as from the server.
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id) is empty; a chunk carries at least 1 byte"))
                return true
            }
            guard UInt64(data.count) <= transfer.size - transfer.position else {
                end(transfer, toSender: "more data than the \(transfer.size) bytes offered", toRecipient: "the sender sent more data than it offered")
                grant(to: transfer.recipient)
                return true
            }
            guard UInt64(data.count) <= transfer.credit - min(transfer.position, transfer.credit) else {
                let error = ProtocolError(.fileProtocol, "FILE_CHUNK for id \(id) goes past offset \(transfer.credit), as far as FILE_CREDIT allowed")
                endpoints[member]?.link.reject(error)
                end(transfer, toSender: error.message, toRecipient: "the sender sent more data than the server let it")
                grant(to: transfer.recipient)
                return true
            }
            transfer.position += UInt64(data.count)
            transfer.passed += UInt64(data.count)
            transfer.lastData = scheduler.now
            endpoints[transfer.recipient]?.link.send(.fileChunk(id: transfer.recipientID, data: data))
            grant(to: transfer.recipient)
        case .fileEnd(let id, let digest):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            guard transfer.state == .accepted else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, "FILE_END for id \(id), which is not an accepted transfer still open"))
                return true
            }
            // The digest comes exactly once: with the offer, or (streamed) with FILE_END.
            guard let sha256 = transfer.offeredDigest ?? digest, transfer.offeredDigest == nil || digest == nil else {
                endpoints[member]?.link.reject(ProtocolError(.fileProtocol, digest == nil
                    ? "FILE_END for id \(id) lacks the file's SHA-256, which a file offered by resume tag must carry"
                    : "FILE_END for id \(id) carries a SHA-256, but its offer named the digest already"))
                return true
            }
            guard transfer.position == transfer.size else {
                // Ended at once on both sides: a short file gets no time of its own.
                let short = "the sender ended the file after \(transfer.position) of its \(transfer.size) bytes"
                end(transfer, toSender: "FILE_END after \(transfer.position) of the \(transfer.size) bytes offered; send all of the file", toRecipient: short)
                grant(to: transfer.recipient)
                return true
            }
            transfer.state = .ending
            // A recipient that streams gets the digest here, whichever way the sender gave it.
            endpoints[transfer.recipient]?.link.send(.fileEnd(id: transfer.recipientID, digest: transfer.recipientStreams ? sha256 : nil))
        case .fileCancel(let id, let reason):
            guard let transfer = bySender[Slot(member: member, id: id)] else { return wasRelayed(id, sending: true, by: member) }
            end(transfer, toSender: nil, toRecipient: reason)
            grant(to: transfer.recipient)
        default:
            return false
        }
        return true
    }

    /// Whether `id` belonged to a relayed transfer of `member` that ended recently (its frame
    /// crossed the end on the way, and is dropped); false leaves the frame to the member's
    /// own files, which answer an unknown id with `file-protocol`.
    private func wasRelayed(_ id: UInt32, sending: Bool, by member: Int) -> Bool {
        endpoints[member]?.recentlyEnded.contains(RelayedID(sending: sending, id: id)) ?? false
    }

    /// Grants each transfer to `member` up to `window` beyond what it passed on
    /// (`FILE_CREDIT`) while the recipient's outbox is below `recipientOutboxMark`; when it is
    /// not, grants again once the outbox empties. So what waits for one recipient stays within
    /// the mark plus one window per transfer, and a sender that holds its credit unused takes
    /// nothing from the others.
    private func grant(to member: Int) {
        guard let recipient = endpoints[member] else { return }
        let hasRoom = recipient.link.connection.bufferedByteCount < limits.recipientOutboxMark
        var waiting = false
        for transfer in byRecipient.values.sorted(by: { $0.recipientID < $1.recipientID })
        where transfer.recipient == member && transfer.state == .accepted {
            let target = transfer.position + min(limits.window, transfer.size - transfer.position)
            guard target > transfer.credit, target - transfer.credit >= limits.minimumGrant || target == transfer.size else { continue }
            guard hasRoom else {
                waiting = true
                continue
            }
            transfer.credit = target
            endpoints[transfer.sender]?.link.send(.fileCredit(id: transfer.senderID, through: target))
        }
        recipient.link.whenDrained(.relay, waiting ? { [weak self] in self?.grant(to: member) } : nil)
    }

    /// Ends a transfer within `idleTimeout` (or `within`) unless it passes on enough data
    /// (`minimumProgress`, or all it still needed) beyond `passed`, what it had passed on when
    /// the count began.
    private func watch(_ transfer: Transfer, passed: UInt64, within: Duration? = nil) {
        let period = within ?? limits.idleTimeout
        transfer.watchdog = scheduler.schedule(after: period) { [weak self, weak transfer] in
            guard let self, let transfer, bySender[Slot(member: transfer.sender, id: transfer.senderID)] === transfer else { return }
            let progress = transfer.passed - min(passed, transfer.passed)
            // What it still needed when the count began: the rest now, plus what came since.
            let needed = (transfer.size - min(transfer.position, transfer.size)).addingReportingOverflow(progress)
            let wanted = max(1, min(limits.minimumProgress, needed.overflow ? .max : needed.partialValue))
            if progress >= wanted { return watch(transfer, passed: transfer.passed) }
            let recipient = endpoints[transfer.recipient]?.name ?? "the recipient"
            let sender = endpoints[transfer.sender]?.name ?? "the sender"
            let time = period.secondsText
            let reason = switch transfer.state {
            case .offered: "\(recipient) did not answer the offer within \(time)"
            case .ending: "\(recipient) did not confirm the file within \(time)"
            case .accepted where transfer.credit <= transfer.position && transfer.position < transfer.size: "\(recipient) took less than \(wanted) bytes in \(time)"
            case .accepted: "\(sender) sent less than \(wanted) bytes in \(time)"
            }
            end(transfer, toSender: reason + "; send it again to resume", toRecipient: reason)
            grant(to: transfer.recipient)
        }
    }

    /// Ends a transfer: the sender gets `FILE_RESULT` refused and the recipient `FILE_CANCEL`
    /// (each only when given a reason: not the side that ended it).
    private func end(_ transfer: Transfer, toSender: String?, toRecipient: String?) {
        forget(transfer)
        if let toSender { endpoints[transfer.sender]?.link.send(.fileResult(id: transfer.senderID, status: .refused, message: toSender)) }
        if let toRecipient { endpoints[transfer.recipient]?.link.send(.fileCancel(id: transfer.recipientID, reason: toRecipient)) }
    }

    /// Removes a transfer from every index and count.
    private func forget(_ transfer: Transfer) {
        guard bySender.removeValue(forKey: Slot(member: transfer.sender, id: transfer.senderID)) != nil else { return }
        byRecipient[Slot(member: transfer.recipient, id: transfer.recipientID)] = nil
        func decrement<Key: Hashable>(_ counts: inout [Key: Int], _ key: Key) {
            let count = counts[key, default: 1] - 1
            counts[key] = count > 0 ? count : nil
        }
        decrement(&sendingCount, transfer.sender)
        decrement(&receivingCount, transfer.recipient)
        decrement(&hostCount, transfer.senderHost)
        endpoints[transfer.sender]?.recentlyEnded.insert(RelayedID(sending: true, id: transfer.senderID))
        transfer.watchdog?.cancel()
        transfer.watchdog = nil
        endpoints[transfer.recipient]?.recentlyEnded.insert(RelayedID(sending: false, id: transfer.recipientID))
    }

    /// A transfer's id on one connection, and whether that side sends it.
    struct RelayedID: Equatable {
        let sending: Bool
        let id: UInt32
    }
}
