import Dispatch
import Glibc

/// One DNS message exchange over our own sockets, bounded by ONE deadline for the whole of it
/// (ldns's own timeout applies to each read, so a server that drips one byte per read could
/// hold a call for hours), and ended at once when `cancel` becomes readable.
///
/// UDP goes through a connected socket, so the kernel drops datagrams from any other address
/// or port; every datagram is then judged by `judge` (id, question, signature), and one that
/// fails is ignored: the exchange keeps waiting for the genuine answer until the deadline.
/// A truncated answer is asked again over TCP, where the length prefix and the message are
/// read with the time that is left.
struct DNSSocketExchange {
    /// What `judge` thinks of a message that arrived.
    enum Verdict {
        /// The answer to our question.
        case accept
        /// Not ours (wrong id or question): ignore it.
        case foreign
        /// Ours by id and question, but its signature does not verify: ignore it, and say so
        /// if nothing better comes.
        case unsigned
    }

    /// Why an exchange ended without an answer.
    enum Failure: Error {
        case timedOut(sawUnsigned: Bool)
        case cancelled
        case refused(String)
        case system(String)
        /// Over TCP (no one else can write into it): the answer did not match.
        case mismatch(Verdict)
    }

    /// The biggest UDP answer read (we offer 1232 in EDNS0; a bigger one is read whole anyway).
    static let maximumDatagram = 65535

    let address: IPAddress
    let port: UInt16
    /// `DispatchTime.now().uptimeNanoseconds` when the whole exchange must be over.
    let deadline: UInt64
    /// A descriptor that becomes readable when the caller gives up.
    let cancel: Int32

    /// Sends `query` over UDP, then over TCP when the accepted answer is truncated.
    /// - Parameter truncated: whether an accepted answer has the TC bit.
    func run(_ query: [UInt8], judge: ([UInt8]) -> Verdict, truncated: ([UInt8]) -> Bool) throws(Failure) -> [UInt8] {
        let answer = try udp(query, judge: judge)
        guard truncated(answer) else { return answer }
        return try tcp(query, judge: judge)
    }

    private func udp(_ query: [UInt8], judge: ([UInt8]) -> Verdict) throws(Failure) -> [UInt8] {
        let socket = try connectedSocket(Int32(SOCK_DGRAM.rawValue))
        defer { close(socket) }
        try send(socket, query)
        var buffer = [UInt8](repeating: 0, count: Self.maximumDatagram)
        var sawUnsigned = false
        while true {
            try wait(socket, POLLIN, sawUnsigned: sawUnsigned)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                let error = errno
                if error == EINTR || error == EAGAIN { continue }
                if error == ECONNREFUSED { throw .refused("nothing listens on UDP port \(port)") }
                throw .system("recv: \(String(cString: strerror(error))) (errno \(error))")
            }
            let datagram = Array(buffer[0..<count])
            switch judge(datagram) {
            case .accept: return datagram
            case .foreign: continue
            case .unsigned: sawUnsigned = true
            }
        }
    }

    private func tcp(_ query: [UInt8], judge: ([UInt8]) -> Verdict) throws(Failure) -> [UInt8] {
        guard query.count <= Int(UInt16.max) else { throw .system("the query does not fit in one TCP message") }
        let socket = try connectedSocket(Int32(SOCK_STREAM.rawValue))
        defer { close(socket) }
        try send(socket, [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query)
        let prefix = try read(socket, count: 2)
        let answer = try read(socket, count: Int(prefix[0]) << 8 | Int(prefix[1]))
        let verdict = judge(answer)
        guard case .accept = verdict else { throw .mismatch(verdict) }
        return answer
    }

    /// A non-blocking socket connected to the server (TCP: connected within the deadline).
    private func connectedSocket(_ kind: Int32) throws(Failure) -> Int32 {
        let socket = Glibc.socket(address.socketFamily, kind | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw .system("socket: \(String(cString: strerror(errno))) (errno \(errno))") }
        let status = address.connect(socket, port: port)
        let error = errno
        if status == 0 { return socket }
        guard error == EINPROGRESS else {
            close(socket)
            throw error == ECONNREFUSED ? .refused("nothing listens on TCP port \(port)") : .system("connect: \(String(cString: strerror(error))) (errno \(error))")
        }
        do throws(Failure) {
            try wait(socket, POLLOUT, sawUnsigned: false)
        } catch {
            close(socket)
            throw error
        }
        var pending: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(socket, SOL_SOCKET, SO_ERROR, &pending, &length)
        guard pending == 0 else {
            close(socket)
            throw pending == ECONNREFUSED ? .refused("nothing listens on TCP port \(port)") : .system("connect: \(String(cString: strerror(pending))) (errno \(pending))")
        }
        return socket
    }

    private func send(_ socket: Int32, _ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            try wait(socket, POLLOUT, sawUnsigned: false)
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if count < 0 {
                let error = errno
                if error == EINTR || error == EAGAIN { continue }
                if error == ECONNREFUSED { throw .refused("the server refused the connection") }
                throw .system("send: \(String(cString: strerror(error))) (errno \(error))")
            }
            sent += count
        }
    }

    /// Reads exactly `count` bytes with the time that is left.
    private func read(_ socket: Int32, count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var have = 0
        while have < count {
            try wait(socket, POLLIN, sawUnsigned: false)
            let got = bytes[have...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if got < 0 {
                let error = errno
                if error == EINTR || error == EAGAIN { continue }
                throw .system("recv: \(String(cString: strerror(error))) (errno \(error))")
            }
            guard got > 0 else { throw .system("the server closed the TCP connection after \(have) of \(count) bytes") }
            have += got
        }
        return bytes
    }

    /// Waits until `socket` is ready for `events`, the deadline passes, or `cancel` fires.
    private func wait(_ socket: Int32, _ events: Int32, sawUnsigned: Bool) throws(Failure) {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw .timedOut(sawUnsigned: sawUnsigned) }
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
            var fds = [pollfd(fd: socket, events: Int16(events), revents: 0), pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, milliseconds)
            if ready < 0 {
                let error = errno
                if error == EINTR { continue }
                throw .system("poll: \(String(cString: strerror(error))) (errno \(error))")
            }
            if fds[1].revents != 0 { throw .cancelled }
            if fds[0].revents != 0 { return }
        }
    }
}

/// A pipe whose read end becomes readable once `fire` is called: how an async caller tells a
/// blocking exchange on another thread to stop. Closed when the last holder lets go.
final class CancelPipe: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the read end readable (more calls change nothing that matters).
    func fire() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}
