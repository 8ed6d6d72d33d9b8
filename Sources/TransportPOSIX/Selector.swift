import CEventPoll
import Glibc

/// The event loop's view of the kernel: an epoll set that says which registered descriptors
/// are ready, and an eventfd that other threads write to wake the loop. The only file that
/// speaks epoll or eventfd.
///
/// - Important: `add`, `change`, `remove` and `wait` belong to the loop's thread; `wake()`
///   is for any thread, but only while the selector is open (the loop guarantees that by
///   calling it under its lock, and closing the selector only after it stopped taking work).
final class Selector {
    /// An event's tag: the registration it belongs to. Zero is the wake-up eventfd.
    typealias Tag = UInt64
    static let wakeTag: Tag = 0

    private let epollFD: Int32
    private let wakeFD: Int32
    private var events: [epoll_event]
    private var isClosed = false

    init(capacity: Int = 64) throws(TransportError) {
        epollFD = try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            wakeFD = try syscall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK)) }
        } catch {
            _ = Glibc.close(epollFD)
            throw error
        }
        events = Array(repeating: epoll_event(), count: capacity)
        do {
            try control(EPOLL_CTL_ADD, wakeFD, tag: Selector.wakeTag, interest: .read)
        } catch {
            _ = Glibc.close(wakeFD)
            _ = Glibc.close(epollFD)
            throw error
        }
    }

    deinit { close() }

    /// Watches `fd` for `interest`, reporting it under `tag`.
    ///
    /// Descriptors with no interest are left out of the set altogether: epoll reports a hang-up
    /// whether asked or not, and a paused connection whose peer hung up would spin the loop.
    func change(_ fd: Int32, tag: Tag, from old: EventLoop.Interest, to new: EventLoop.Interest) throws(TransportError) {
        switch (old.isEmpty, new.isEmpty) {
        case (true, true): return
        case (true, false): try control(EPOLL_CTL_ADD, fd, tag: tag, interest: new)
        case (false, true): try control(EPOLL_CTL_DEL, fd, tag: tag, interest: new)
        case (false, false): if old != new { try control(EPOLL_CTL_MOD, fd, tag: tag, interest: new) }
        }
    }

    /// Waits until a descriptor is ready, the loop is woken, or `timeoutMilliseconds` passed
    /// (-1: no limit), and hands each ready tag to `body`. The wake-up itself is consumed here.
    func wait(timeoutMilliseconds: Int32, _ body: (Tag, EventLoop.Readiness) -> Void) throws(TransportError) {
        let count = try events.withUnsafeMutableBufferPointer { buffer throws(TransportError) in
            try syscallAllowingInterrupt("epoll_wait") {
                epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
            }
        }
        for index in 0..<Int(count) {
            let event = events[index]
            let tag = event.data.u64
            if tag == Selector.wakeTag {
                var value: UInt64 = 0
                _ = Glibc.read(wakeFD, &value, MemoryLayout<UInt64>.size)
                continue
            }
            body(tag, EventLoop.Readiness(epollEvents: event.events))
        }
    }

    /// Makes a `wait` in progress (or the next one) return at once. Safe from any thread
    /// while the selector is open.
    func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is full: the loop is woken already.
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Closes the epoll set and the eventfd; later calls do nothing.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(epollFD)
    }

    private func control(_ operation: Int32, _ fd: Int32, tag: Tag, interest: EventLoop.Interest) throws(TransportError) {
        var event = epoll_event()
        event.events = interest.epollEvents
        event.data.u64 = tag
        _ = try syscall("epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
    }

    /// Like `syscall`, but an interrupted wait returns no events instead of waiting again for
    /// the whole timeout (the loop recomputes it from its timers).
    private func syscallAllowingInterrupt(_ name: String, _ body: () -> Int32) throws(TransportError) -> Int32 {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { return 0 }
        precondition(code != EBADF && code != EFAULT, "\(name): \(String(cString: strerror(code))): a bug in svc's event loop")
        throw TransportError(call: name, errno: code)
    }
}

extension EventLoop.Interest {
    fileprivate var epollEvents: UInt32 {
        var events: UInt32 = 0
        if contains(.read) { events |= EPOLLIN.rawValue }
        if contains(.write) { events |= EPOLLOUT.rawValue }
        return events
    }
}

extension EventLoop.Readiness {
    /// An error or hang-up counts as both: the read or write that follows reports it.
    fileprivate init(epollEvents events: UInt32) {
        self = []
        if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { insert(.readable) }
        if events & (EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { insert(.writable) }
    }
}

/// Names the calling thread (as `top -H` and debuggers show it); Linux keeps 15 bytes.
func nameCurrentThread(_ name: String) {
    _ = pthread_setname_np(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
}
