/// Prints a tool's events on stdout, as text lines or, with `--json`, as JSON objects that
/// start with `"event"` and `"time"`.
public struct EventOutput: Sendable {
    public let json: Bool
    /// Whether text lines start with the local time (`HumanTime`); JSON has `"time"` always.
    public let timestamps: Bool

    public init(json: Bool, timestamps: Bool = false) {
        self.json = json
        self.timestamps = timestamps && !json
    }

    /// - Parameters:
    ///   - event: the event's name, e.g. `registered`.
    ///   - text: the line printed without `--json` (`Console` escapes it for the terminal).
    ///   - fields: the JSON members after `event` and `time`.
    public func emit(_ event: String, text: @autoclosure () -> String, _ fields: [(String, JSONValue)] = []) {
        if json {
            Console.out(JSONValue.object([("event", .string(event)), ("time", .string(timestampNow()))] + fields).serialized)
        } else if timestamps {
            Console.out(HumanTime.now() + " " + text())
        } else {
            Console.out(text())
        }
    }
}
