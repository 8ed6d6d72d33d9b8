import CommandLineSupport
import Dispatch
import Messaging
import MessagingCore
import Synchronization

/// The files on their way, shown like pv: a bar on stderr when it is a terminal, or, with
/// `--json`, `file-progress` events on stdout (at most one a transfer each `eventInterval`,
/// plus the last); nothing otherwise, so logs get only the lines that say a file started and
/// ended.
///
/// The bar shows the oldest transfer (and how many more there are), redrawn at most every
/// `redrawInterval` as data moves and once a second while none does, so that the elapsed time
/// counts on and a transfer without a byte for `TransferMeter.stallAfter` reads "stalled";
/// one whose connection is being restored reads "reconnecting". Lines printed meanwhile
/// appear above it (`Console`).
public final class TransferProgress: Sendable {
    /// The one board the tool's output shares.
    public static let shared = TransferProgress()
    /// The bar is drawn at most this often while data moves: 0.1 s.
    public static let redrawInterval: Duration = .milliseconds(100)
    /// With `--json`, at most one `file-progress` event a transfer this often (plus the last):
    /// 1 s.
    public static let eventInterval: Duration = .seconds(1)

    private struct Key: Hashable {
        let direction: FileTransfers.Direction
        let peer: String
        let name: String
    }

    private struct Entry {
        let key: Key
        var meter: TransferMeter
        var reconnecting = false
        var lastEvent: ContinuousClock.Instant?
    }

    private struct State {
        /// Oldest first.
        var entries: [Entry] = []
        var lastDraw: ContinuousClock.Instant?
        var ticking = false
    }

    private let state = Mutex(State())
    private let ticks = DispatchQueue(label: "svc.progress")

    /// A transfer starts (or starts again after a reconnect, at `resumingAt`).
    func started(_ direction: FileTransfers.Direction, peer: String, name: String, size: UInt64, resumingAt: UInt64, _ output: EventOutput) {
        // A file received with no byte to come (empty, or all of it resumed) ends without a
        // progress report, which is what takes a received file off the bar: it is not put on.
        guard Self.isShown(output), direction == .sending || resumingAt < size else { return }
        let now = ContinuousClock.now
        let key = Key(direction: direction, peer: peer, name: name)
        state.withLock { state in
            state.entries.removeAll { $0.key == key }
            state.entries.append(Entry(key: key, meter: TransferMeter(total: size, startOffset: resumingAt, at: now)))
        }
        if !output.json { draw(force: true) }
    }

    /// `done` bytes of a transfer are through.
    func progressed(_ direction: FileTransfers.Direction, peer: String, name: String, done: UInt64, total: UInt64, _ output: EventOutput) {
        guard Self.isShown(output) else { return }
        let now = ContinuousClock.now
        let key = Key(direction: direction, peer: peer, name: name)
        let event = state.withLock { state -> Entry? in
            // Reports come only between a start and an end; one without a start is ignored
            // rather than left on the bar for good.
            guard let index = state.entries.firstIndex(where: { $0.key == key }) else { return nil }
            state.entries[index].meter.record(done, at: now)
            state.entries[index].reconnecting = false
            let entry = state.entries[index]
            // A received file is complete with its last byte (verifying it is quick); a sent
            // one stays until the receiver confirmed it.
            if direction == .receiving && entry.meter.done >= entry.meter.total { state.entries.remove(at: index) }
            guard output.json else { return nil }
            if let last = entry.lastEvent, now - last < Self.eventInterval, entry.meter.done < entry.meter.total { return nil }
            if let index = state.entries.firstIndex(where: { $0.key == key }) { state.entries[index].lastEvent = now }
            return entry
        }
        if output.json {
            if let event { emit(event, at: now, output) }
        } else {
            draw(force: done >= total) // 100% shows while the receiver verifies
        }
    }

    /// A transfer ended (its outcome is printed by the caller); `name` nil: every one going
    /// that way with `peer` (a link carries one outgoing file at a time).
    func finished(_ direction: FileTransfers.Direction, peer: String, name: String?) {
        let removed = state.withLock { state -> Bool in
            let before = state.entries.count
            state.entries.removeAll { $0.key.direction == direction && $0.key.peer == peer && (name == nil || $0.key.name == name) }
            return state.entries.count != before
        }
        if removed { draw(force: true) }
    }

    /// The connection to `peer` is being restored: its transfers wait, and resume after.
    public func reconnecting(peer: String) {
        let marked = state.withLock { state -> Bool in
            var marked = false
            for index in state.entries.indices where state.entries[index].key.peer == peer {
                state.entries[index].reconnecting = true
                marked = true
            }
            return marked
        }
        if marked { draw(force: true) }
    }

    private static func isShown(_ output: EventOutput) -> Bool {
        output.json || Console.standardErrorIsTerminal
    }

    /// Draws the bar (or takes it down when nothing is left), unless it was drawn less than
    /// `redrawInterval` ago and `force` is false; keeps the once-a-second redraw going while
    /// a transfer is shown. The bar is handed to `Console` under the lock, so that a redraw
    /// computed before a transfer ended cannot land after the bar was taken down.
    private func draw(force: Bool) {
        guard Console.standardErrorIsTerminal else { return }
        let now = ContinuousClock.now
        let startTicking = state.withLock { state -> Bool in
            guard let first = state.entries.first else {
                state.lastDraw = nil
                Console.clearProgress()
                return false
            }
            if !force, let last = state.lastDraw, now - last < Self.redrawInterval { return false }
            state.lastDraw = now
            let key = first.key
            let name = key.direction == .sending ? String(key.name.split(separator: "/").last ?? "") : key.name
            let label = key.direction == .sending ? "\(name) to \(key.peer)" : "\(name) from \(key.peer)"
            Console.progress(ProgressLine.render(label: label, first.meter.snapshot(at: now), condition: first.reconnecting ? .reconnecting : .running,
                                                 others: state.entries.count - 1, width: Console.terminalWidth))
            guard !state.ticking else { return false }
            state.ticking = true
            return true
        }
        if startTicking { tick() }
    }

    /// Redraws once a second while transfers are shown.
    private func tick() {
        ticks.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            let more = state.withLock { state -> Bool in
                state.ticking = !state.entries.isEmpty
                return state.ticking
            }
            guard more else { return }
            draw(force: true)
            tick()
        }
    }

    /// One `file-progress` event (README, "JSON events").
    private func emit(_ entry: Entry, at now: ContinuousClock.Instant, _ output: EventOutput) {
        let snapshot = entry.meter.snapshot(at: now)
        let key = entry.key
        let elapsed = snapshot.elapsed.components
        output.emit("file-progress", text: "", [
            ("direction", .string(key.direction == .sending ? "send" : "receive")),
            (key.direction == .sending ? "to" : "from", .string(key.peer)),
            ("name", .string(key.name)),
            ("bytes", .integer(Int(clamping: snapshot.done))),
            ("size", .integer(Int(clamping: snapshot.total))),
            ("percent", .integer(snapshot.percent)),
            ("resumed_from", .integer(Int(clamping: snapshot.startOffset))),
            ("elapsed_ms", .integer(Int(clamping: elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000))),
            ("bytes_per_second", snapshot.bytesPerSecond.map { .integer(Int(clamping: UInt64(min(max(0, $0), 1e18)))) } ?? .null),
            ("eta_seconds", snapshot.remaining.map { .integer(Int(clamping: ($0 + .nanoseconds(999_999_999)).components.seconds)) } ?? .null),
        ])
    }
}
