import Glibc

/// The outcome of a non-blocking read or write.
enum IOResult: Equatable {
    case processed(Int)
    case wouldBlock
}

/// The one funnel for system calls: retries EINTR, captures errno at once and throws it with
/// the call's name. EBADF and EFAULT mean a bug here (a closed or bad fd), so they stop the
/// process instead of being reported as a network problem.
func syscall<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(TransportError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        precondition(code != EBADF && code != EFAULT, "\(name): \(String(cString: strerror(code))): a bug in svc's fd handling")
        throw TransportError(call: name, errno: code)
    }
}

/// Like `syscall`, but EAGAIN/EWOULDBLOCK (and EINPROGRESS for connect) become `.wouldBlock`.
func nonBlockingSyscall(_ name: String, _ body: () -> Int) throws(TransportError) -> IOResult {
    do {
        return .processed(try syscall(name, body))
    } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK || error.errno == EINPROGRESS {
        return .wouldBlock
    }
}
