/// The one line a progress bar shows on a terminal, fitted to its width:
///
///     holiday.mp4 to alice  45% [#############.................]  512.0 MiB/1.1 GiB  12.3 MiB/s  0:42  ETA 0:48
///
/// label, percent, bar, bytes done and total, rate, elapsed time, estimated time left. A
/// stalled transfer shows `stalled 0:07` (how long nothing came) instead of rate and ETA; a
/// transfer waiting for its connection shows `reconnecting`. Pure: the caller reads the width
/// and draws the result.
public enum ProgressLine {
    /// What a transfer is doing besides moving bytes.
    public enum Condition: Sendable, Equatable {
        case running
        /// The connection is being restored; the transfer resumes afterwards.
        case reconnecting
    }

    /// The bar is at most this many cells wide, and is left out when fewer than 10 fit.
    public static let widestBar = 30

    /// Renders `snapshot` in at most `width - 1` columns (the last column is left free, so
    /// that no terminal wraps the line).
    ///
    /// - Parameters:
    ///   - label: what is transferred, e.g. `holiday.mp4 to alice`; escaped here, since file
    ///     and member names come from the network, and shortened with `...` first when the
    ///     line is too long.
    ///   - others: further transfers in progress, shown as `(+2 more)`.
    ///   - width: the terminal's width in columns.
    public static func render(label: String, _ snapshot: TransferMeter.Snapshot, condition: Condition = .running,
                              others: Int = 0, width: Int) -> String {
        let columns = max(1, width - 1)
        let label = TerminalSafe.escape(label)
        // The fields after the bar, each with its rank: when the line is too narrow, the
        // highest rank goes first (elapsed, then ETA, then how many more, then the rate).
        // Bytes done and the rate are padded to a steady width, so the line does not jitter.
        func padded(_ text: String, to width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let total = TransferFormat.bytes(snapshot.total)
        var fields: [(text: String, rank: Int)] = [("\(padded(TransferFormat.bytes(snapshot.done), to: total.count))/\(total)", 0)]
        if condition == .reconnecting {
            fields.append(("reconnecting", 1))
        } else if let stalled = snapshot.stalledFor {
            fields.append(("stalled \(TransferFormat.duration(stalled))", 1))
        } else {
            fields.append((padded(snapshot.bytesPerSecond.map(TransferFormat.rate) ?? "-- B/s", to: "999.9 KiB/s".count), 1))
        }
        fields.append((TransferFormat.duration(snapshot.elapsed), 4))
        if !snapshot.isComplete, condition == .running, snapshot.stalledFor == nil {
            if let remaining = snapshot.remaining {
                // Rounded up: "ETA 0:00" only once nothing is left.
                let shown = remaining >= TransferMeter.Snapshot.longestEstimate ? ">" + TransferFormat.duration(remaining)
                    : TransferFormat.duration(remaining + .nanoseconds(999_999_999))
                fields.append(("ETA " + shown, 3))
            } else {
                fields.append(("ETA --:--", 3))
            }
        }
        if others > 0 { fields.append(("(+\(others) more)", 2)) }
        let percent = String(repeating: " ", count: max(0, 3 - String(snapshot.percent).count)) + "\(snapshot.percent)%"

        func tail(_ kept: [(text: String, rank: Int)], bar: Int) -> String {
            var first = percent
            if bar > 0 {
                let filled = snapshot.isComplete ? bar : min(bar, Int(Double(bar) * Double(snapshot.percent) / 100))
                first += " [" + String(repeating: "#", count: filled) + String(repeating: ".", count: bar - filled) + "]"
            }
            return ([first] + kept.map(\.text)).joined(separator: "  ")
        }

        // Drop fields until the tail leaves the label `shortestLabel` columns: a name cut much shorter says little.
        let labelWidth = displayWidth(label)
        let shortestLabel = min(labelWidth, 20)
        while !fields.isEmpty, displayWidth(tail(fields, bar: 0)) + 1 + shortestLabel > columns,
              let worst = fields.indices.max(by: { fields[$0].rank < fields[$1].rank }) {
            fields.remove(at: worst)
        }
        let plain = tail(fields, bar: 0)
        // A bar when it fits beside a label of up to a third of the line.
        let labelCap = min(labelWidth, max(16, columns / 3))
        let spare = columns - displayWidth(plain) - 1 - labelCap
        if spare >= 13 { // " [" and "]" around at least 10 cells
            let bar = min(widestBar, spare - 3)
            return truncated(label, to: labelCap) + " " + tail(fields, bar: bar)
        }
        let room = columns - displayWidth(plain) - 1
        guard room > 0 else { return truncated(plain, to: columns) }
        return truncated(label, to: room) + " " + plain
    }

    /// Columns `text` takes at most: ASCII one, anything else two (wide characters take two;
    /// counting every other one so too may waste a column but never overflows the line).
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + ($1.isASCII ? 1 : 2) }
    }

    /// `text` cut to `columns` (by `displayWidth`), ending in `...` when cut.
    public static func truncated(_ text: String, to columns: Int) -> String {
        guard displayWidth(text) > columns else { return text }
        guard columns > 3 else { return String(repeating: ".", count: max(0, columns)) }
        var kept = ""
        var used = 0
        for character in text {
            let width = character.isASCII ? 1 : 2
            guard used + width <= columns - 3 else { break }
            kept.append(character)
            used += width
        }
        return kept + "..."
    }
}
