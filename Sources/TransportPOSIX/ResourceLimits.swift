import Glibc

/// Process limits a server needs to hold many connections.
public enum ResourceLimits {
    /// Raises the soft limit on open files to the hard limit (each connection is one), and
    /// returns the limit now in force.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}
