/// The last lines said to the whole room, kept for members who join later (`HISTORY`
/// frames, docs/PROTOCOL.md). Private lines are never put here; that is the caller's rule.
///
/// Bounded twice: at most `capacity` lines (itself at most `maximumLines`), and at most
/// `maximumBytes` of names and text together; the oldest lines go first. A line is at most
/// `Message.maximumTextBytes` of text and `Message.maximumNameBytes` of name, so one always
/// fits.
public struct RoomHistory: Sendable {
    /// One line of the room.
    public struct Line: Sendable, Hashable {
        /// When it was said: milliseconds since 1970-01-01 UTC, by the server's clock.
        public var time: UInt64
        public var from: String
        public var text: String

        public init(time: UInt64, from: String, text: String) {
            self.time = time
            self.from = from
            self.text = text
        }

        /// What the line counts for against `maximumBytes`.
        var size: Int { from.utf8.count + text.utf8.count }
    }

    /// The most lines a history keeps, whatever is asked for: 100.
    public static let maximumLines = 100
    /// The most bytes of names and text a history keeps: 1 MiB (so a newcomer is sent at most
    /// that, far below a connection's 4 MiB outbox).
    public static let maximumBytes = 1 << 20

    /// Lines kept at most: what was asked for, within 0 ... `maximumLines` (0 keeps none).
    public let capacity: Int
    /// Oldest first.
    public private(set) var lines: [Line] = []
    /// Bytes of names and text held now.
    public private(set) var byteCount = 0

    public init(capacity: Int) {
        self.capacity = min(max(0, capacity), Self.maximumLines)
    }

    /// Adds a line, dropping the oldest ones while there are more than `capacity` lines or
    /// more than `maximumBytes`.
    public mutating func append(_ line: Line) {
        guard capacity > 0 else { return }
        lines.append(line)
        byteCount += line.size
        var dropped = 0
        while lines.count - dropped > capacity || byteCount > Self.maximumBytes {
            byteCount -= lines[dropped].size
            dropped += 1
        }
        if dropped > 0 { lines.removeFirst(dropped) }
    }
}
