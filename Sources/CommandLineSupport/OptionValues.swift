/// The version every svc tool reports.
public let svcVersion = "0.1.0"

/// Runs a validating initializer and turns its error into a usage error with its message.
public func validated<Value, Failure: Error & CustomStringConvertible>(_ body: () throws(Failure) -> Value) throws(UsageError) -> Value {
    do {
        return try body()
    } catch {
        throw UsageError(error.description)
    }
}

/// Parses a positive number of seconds such as `5` or `0.25` (at most a day).
public func parseSeconds(_ text: String, option: String) throws(UsageError) -> Duration {
    guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86400 else {
        throw UsageError("--\(option) takes a number of seconds greater than 0 and at most 86400, not '\(text)'")
    }
    return .milliseconds(Int64((seconds * 1000).rounded(.up)))
}

/// Parses a TCP port from 0 to 65535; 0 lets the kernel choose.
public func parsePort(_ text: String, option: String) throws(UsageError) -> UInt16 {
    guard let port = UInt16(text) else {
        throw UsageError("--\(option) takes a port from 0 to 65535 (0: any free port), not '\(text)'")
    }
    return port
}
