import Glibc

/// The time as people read it in a log: local time to the second, `2026-12-01 16:40:05`
/// (ISO 8601's date and time with a space between, no zone: the machine's own). What
/// `--timestamps` puts before each line, and what marks a history line's time.
public enum HumanTime {
    /// `parts` (as `localtime_r` fills it) as `YYYY-MM-DD HH:MM:SS`.
    public static func format(_ parts: tm) -> String {
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2)) "
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
    }

    /// A moment given in milliseconds since 1970 (UTC), in local time.
    public static func format(unixMilliseconds: UInt64) -> String {
        var seconds = time_t(clamping: unixMilliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return format(parts)
    }

    /// Now, in local time.
    public static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return format(parts)
    }
}

extension CommandSpec.Option {
    /// `--timestamps`: each line of text output starts with the local time.
    public static let timestamps = CommandSpec.Option("timestamps", help: "Start each line on standard output with the local time, YYYY-MM-DD HH:MM:SS.")
    /// `--no-timestamps`: the opposite, where timestamps are on by default.
    public static let noTimestamps = CommandSpec.Option("no-timestamps", help: "Print no timestamps, even when standard output is not a terminal.")
}

extension ParsedCommandLine {
    /// `--timestamps` (true), `--no-timestamps` (false), or nil when neither was given.
    /// - Throws: `UsageError` when both are.
    public func timestamps() throws(UsageError) -> Bool? {
        switch (flag("timestamps"), flag("no-timestamps")) {
        case (true, true): throw UsageError("--timestamps and --no-timestamps cannot be used together")
        case (true, false): return true
        case (false, true): return false
        case (false, false): return nil
        }
    }
}
