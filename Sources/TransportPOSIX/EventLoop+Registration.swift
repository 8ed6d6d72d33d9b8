import TransportCore

/// The owner of a descriptor registered with an event loop (a connection, a listener, a
/// connection attempt). The loop keeps the owner alive while it is registered.
public protocol EventLoopSelectable: AnyObject {
    /// The descriptor is ready for some of what it is registered for. Runs on the loop.
    func ready(_ readiness: EventLoop.Readiness)
    /// The loop is shutting down: close now (and deregister). Runs on the loop.
    func eventLoopIsClosing()
}

/// A descriptor's place in an event loop, returned by `register` and used to change or end it.
public struct EventLoopRegistration: Hashable, Sendable {
    let tag: Selector.Tag
}

/// What the loop knows of a registered descriptor.
struct Registration {
    let fd: Int32
    var interest: EventLoop.Interest
    let owner: any EventLoopSelectable
}

extension EventLoop {
    /// Starts watching `fd` for `interest` on behalf of `owner`, which the loop keeps alive until
    /// `deregister`.
    /// - Important: on the loop only. Deregister before closing the descriptor.
    /// - Throws: `TransportError` from epoll_ctl (e.g. the user's limit of watched descriptors).
    public func register(_ fd: Int32, interest: Interest, owner: any EventLoopSelectable) throws(TransportError) -> EventLoopRegistration {
        assertOnExecutor()
        let tag = nextTag
        nextTag += 1
        try selector.change(fd, tag: tag, from: [], to: interest)
        registrations[tag] = Registration(fd: fd, interest: interest, owner: owner)
        return EventLoopRegistration(tag: tag)
    }

    /// Watches a registered descriptor for `interest` from now on (empty: for nothing).
    /// - Important: on the loop only.
    public func setInterest(_ interest: Interest, for registration: EventLoopRegistration) throws(TransportError) {
        assertOnExecutor()
        guard let current = registrations[registration.tag], current.interest != interest else { return }
        try selector.change(current.fd, tag: registration.tag, from: current.interest, to: interest)
        registrations[registration.tag]?.interest = interest
    }

    /// What a registered descriptor is watched for now (empty once deregistered).
    public func interest(of registration: EventLoopRegistration) -> Interest {
        assertOnExecutor()
        return registrations[registration.tag]?.interest ?? []
    }

    /// Stops watching the descriptor and lets go of its owner; the descriptor may be closed
    /// after this returns. Does nothing the second time.
    /// - Important: on the loop only.
    public func deregister(_ registration: EventLoopRegistration) {
        assertOnExecutor()
        guard let current = registrations.removeValue(forKey: registration.tag) else { return }
        // Removing a descriptor the kernel still knows cannot fail; should it, closing it removes it.
        try? selector.change(current.fd, tag: registration.tag, from: current.interest, to: [])
    }
}

extension EventLoop.Interest {
    /// The readiness that answers this interest.
    var readiness: EventLoop.Readiness {
        var readiness: EventLoop.Readiness = []
        if contains(.read) { readiness.insert(.readable) }
        if contains(.write) { readiness.insert(.writable) }
        return readiness
    }
}
