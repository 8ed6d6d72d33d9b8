/// The lines of a line-based configuration file (`known_peers`, the members file), cut the same
/// way for both: a leading byte-order mark dropped, split at newlines, a cut last line not read,
/// at most `maximumLines` lines.
struct ConfigFileLines {
    /// The lines read, without their newlines (a line may still end in `\r`, and may be longer
    /// than the caller allows: the caller checks each line).
    let pieces: [ArraySlice<UInt8>]
    /// Why writing the file back from `pieces` would lose part of it, or nil when every line was read.
    let incompleteness: String?
    /// The warning for the lines past `maximumLines`, or nil when there were none.
    let linesNotRead: KnownPeers.Warning?

    /// Cuts `bytes` into lines.
    /// - Parameters:
    ///   - isWhole: false when `bytes` is only the start of the file (the reader stopped): its
    ///     last, partial line is then not read either.
    ///   - maximumLines: lines read at most.
    ///   - maximumLineLength: the caller's line limit, named in the message for a cut file.
    init(_ bytes: [UInt8], isWhole: Bool, maximumLines: Int, maximumLineLength: Int) {
        // A byte-order mark that an editor put before the first line is not part of it.
        let bytes = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        var pieces = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var incompleteness: String?
        var linesNotRead: KnownPeers.Warning?
        if !isWhole {
            // The piece after the last newline read is cut (or empty when the cut fell just
            // after a newline): it is not read.
            pieces.removeLast()
            incompleteness = "it is longer than what svc reads of it (\(maximumLines) lines of \(maximumLineLength) bytes)"
        } else if pieces.last?.isEmpty == true {
            pieces.removeLast()
        }
        if pieces.count > maximumLines {
            linesNotRead = KnownPeers.Warning(lineNumber: maximumLines + 1, reason: "this line and the rest were not read: svc reads \(maximumLines) lines at most")
            incompleteness = "it has more than \(maximumLines) lines"
            pieces.removeLast(pieces.count - maximumLines)
        }
        self.pieces = pieces
        self.incompleteness = incompleteness
        self.linesNotRead = linesNotRead
    }
}
