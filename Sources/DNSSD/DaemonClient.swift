import CAvahiClient
import Dispatch
import Glibc
import Synchronization

/// Why a lookup through `DaemonClient` failed outside its own callback: the connection to
/// the daemon could not be made, the daemon refused the lookup, or the connection broke
/// while the lookup ran.
struct DaemonFailure: Error, Sendable, Hashable {
    enum Stage: Sendable, Hashable {
        /// `avahi_client_new` failed: no connection to the daemon.
        case connecting
        /// The connection was made, but creating the lookup (`avahi_*_new`) failed.
        case starting
        /// The lookup had been taken, and then the connection broke (`AVAHI_CLIENT_FAILURE`)
        /// or the lookup itself failed (`AVAHI_RESOLVER_FAILURE`, `AVAHI_BROWSER_FAILURE`).
        case running
    }

    let stage: Stage
    /// The `AVAHI_ERR_*` value.
    let code: Int32
    /// What the system bus was when the failure was seen, for `.connecting` and for a broken
    /// connection (`SystemBus.probe()`); nil when it was not asked.
    let bus: SystemBus.Status?
    /// How long the failing connection attempt took (`.connecting`): `AVAHI_ERR_NO_DAEMON` after
    /// `AvahiDaemon.noReplyAfter` is a daemon that did not answer, not one that is not running.
    var took: Duration = .zero
}

/// A lookup running on the daemon (a service resolver or a record browser), as its owner
/// holds it: `cancel()` frees it. Safe to use from any thread.
final class DaemonLookup: Sendable {
    private let taken = Atomic<Bool>(false)

    fileprivate init() {}

    /// Whether the daemon took the lookup (it answered the call that created it); false while
    /// the connection or that call still waits for the daemon, or when either failed.
    var isTaken: Bool { taken.load(ordering: .acquiring) }

    fileprivate func markTaken() { taken.store(true, ordering: .releasing) }

    /// Frees the lookup on the daemon; no report comes from it after its callback context is
    /// released (on `daemonClientQueue`). Safe to call more than once.
    func cancel() {
        daemonClientQueue.async { [self] in DaemonClient.shared.cancel(self) }
    }
}

/// The process's one connection to avahi-daemon through its own client library
/// (libavahi-client), shared by every service resolve and address lookup: one D-Bus
/// connection and one poll thread for all of them, where Avahi's dns_sd layer opened one of
/// each per `DNSServiceRef` (and crashed when the daemon went away under a resolve or a
/// record query: its `generic_client_callback` calls callback fields that `sdref_new` never
/// set).
///
/// The connection is made when the first lookup starts, and closed when no lookup has used it
/// for `idleLinger`, or at once when it breaks (the daemon or the bus stopped: every running
/// lookup is told, and the next lookup makes a new connection). A lookup started after
/// `DBUS_SYSTEM_BUS_ADDRESS` changed gets a new connection, to that bus.
///
/// - Important: bound to `daemonClientQueue` (every method asserts it), where the blocking calls
///   run: the D-Bus round trips of `avahi_client_new` and `avahi_*_new`/`_free` (with the
///   poll's lock held), and joining the poll thread. Avahi's poll thread runs the lookups' C
///   callbacks, which copy what they need and hand it to `dnssdQueue`, and the connection's
///   state callback, which hands a failure to `daemonClientQueue`. `@unchecked Sendable` only
///   because Dispatch closures carry `shared` to its queue.
final class DaemonClient: @unchecked Sendable {
    static let shared = DaemonClient()

    /// How long an unused connection stays open: a resolve is followed by its address lookup,
    /// and svc-browse --resolve resolves one instance after another.
    static let idleLinger: Duration = .seconds(2)

    private var connection: Connection?
    private var lookups: [ObjectIdentifier: Entry] = [:]
    /// Counts connections made, so that a failure reported for an old one is ignored.
    private var generation: UInt64 = 0
    /// Counts the times the connection became unused; a pending idle close acts only on its own.
    private var idleMark: UInt64 = 0

    private struct Connection {
        let poll: OpaquePointer
        let client: OpaquePointer
        let watcher: Unmanaged<ConnectionWatcher>
        let generation: UInt64
        /// `DBUS_SYSTEM_BUS_ADDRESS` when it was made (nil: unset).
        let busVariable: String?
    }

    private struct Entry {
        let lookup: DaemonLookup
        let object: OpaquePointer
        let free: @Sendable (OpaquePointer) -> Void
        let context: Unmanaged<AnyObject>
        let failed: @Sendable (DaemonFailure) -> Void
    }

    private init() {}

    /// Starts a lookup on the shared connection (making it first when there is none).
    /// - Parameters:
    ///   - context: the C callback's context (its `userdata`); retained until the lookup is
    ///     freed. Its methods run on Avahi's poll thread.
    ///   - failed: told, on `daemonClientQueue`, when the connection cannot be made, the
    ///     lookup cannot be created, or the connection breaks while it runs; not called after
    ///     `cancel()`.
    ///   - create: creates the C object with the client and the context pointer (on
    ///     `daemonClientQueue`, the poll's lock held); nil when the daemon refused it.
    ///   - free: frees that object (likewise).
    static func start(context: AnyObject, failed: @escaping @Sendable (DaemonFailure) -> Void,
                      create: @escaping @Sendable (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?,
                      free: @escaping @Sendable (OpaquePointer) -> Void) -> DaemonLookup {
        let lookup = DaemonLookup()
        let retained = UncheckedContext(Unmanaged.passRetained(context))
        daemonClientQueue.async {
            shared.open(lookup, context: retained.value, failed: failed, create: create, free: free)
        }
        return lookup
    }

    private func open(_ lookup: DaemonLookup, context: Unmanaged<AnyObject>, failed: @escaping @Sendable (DaemonFailure) -> Void,
                      create: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?, free: @escaping @Sendable (OpaquePointer) -> Void) {
        assertOnDaemonClientQueue()
        idleMark &+= 1
        // A connection that broke but whose failure is still on its way here is not used, nor
        // one to another bus than the one named now.
        if let current = connection, clientState(current) == AVAHI_CLIENT_FAILURE || current.busVariable != Self.busVariable() {
            close(current)
        }
        let current: Connection
        let opened: Result<Connection, DaemonFailure> = if let connection { .success(connection) } else { connect() }
        switch opened {
        case .success(let made): current = made
        case .failure(let failure):
            context.release()
            failed(failure)
            closeWhenIdle()
            return
        }
        avahi_threaded_poll_lock(current.poll)
        let object = create(current.client, context.toOpaque())
        let code = object == nil ? avahi_client_errno(current.client) : 0
        avahi_threaded_poll_unlock(current.poll)
        guard let object else {
            context.release()
            failed(DaemonFailure(stage: .starting, code: code, bus: nil))
            closeWhenIdle()
            return
        }
        lookup.markTaken()
        lookups[ObjectIdentifier(lookup)] = Entry(lookup: lookup, object: object, free: free, context: context, failed: failed)
    }

    fileprivate func cancel(_ lookup: DaemonLookup) {
        assertOnDaemonClientQueue()
        guard let entry = lookups.removeValue(forKey: ObjectIdentifier(lookup)), let current = connection else { return }
        avahi_threaded_poll_lock(current.poll)
        entry.free(entry.object)
        avahi_threaded_poll_unlock(current.poll)
        // The poll thread runs callbacks with the lock held: none is running for it now.
        entry.context.release()
        closeWhenIdle()
    }

    /// The connection `generation` broke (`AVAHI_CLIENT_FAILURE`): every lookup on it is told
    /// and dropped, and it is closed.
    fileprivate func lost(generation: UInt64, code: Int32) {
        assertOnDaemonClientQueue()
        guard let current = connection, current.generation == generation else { return }
        let failure = DaemonFailure(stage: .running, code: code, bus: SystemBus.probe())
        let dropped = lookups.values
        lookups = [:]
        close(current)
        for entry in dropped {
            entry.context.release()
            entry.failed(failure)
        }
    }

    private func connect() -> Result<Connection, DaemonFailure> {
        assertOnDaemonClientQueue()
        let started = ContinuousClock.now
        func failure(_ code: Int32) -> Result<Connection, DaemonFailure> {
            .failure(DaemonFailure(stage: .connecting, code: code, bus: SystemBus.probe(), took: ContinuousClock.now - started))
        }
        let busVariable = Self.busVariable()
        guard let poll = avahi_threaded_poll_new() else { return failure(Int32(AVAHI_ERR_NO_MEMORY)) }
        generation &+= 1
        let watcher = Unmanaged.passRetained(ConnectionWatcher(generation: generation))
        var error: Int32 = 0
        // Called from avahi_client_new itself, and then on the poll thread with its lock held.
        let client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), { client, state, userdata in
            guard state == AVAHI_CLIENT_FAILURE, let userdata else { return }
            let code = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_DISCONNECTED)
            Unmanaged<ConnectionWatcher>.fromOpaque(userdata).takeUnretainedValue().lost(code: code)
        }, watcher.toOpaque(), &error)
        guard let client else {
            avahi_threaded_poll_free(poll)
            watcher.release()
            return failure(error)
        }
        guard avahi_threaded_poll_start(poll) == 0 else {
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            watcher.release()
            return failure(Int32(AVAHI_ERR_OS))
        }
        let made = Connection(poll: poll, client: client, watcher: watcher, generation: generation, busVariable: busVariable)
        connection = made
        return .success(made)
    }

    private static func busVariable() -> String? { getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } }

    private func clientState(_ current: Connection) -> AvahiClientState {
        avahi_threaded_poll_lock(current.poll)
        defer { avahi_threaded_poll_unlock(current.poll) }
        return avahi_client_get_state(current.client)
    }

    /// Ends the poll thread, then frees the client (and every lookup still on it), the poll and
    /// the watcher. The lookups' contexts are the caller's to release.
    private func close(_ current: Connection) {
        assertOnDaemonClientQueue()
        avahi_threaded_poll_stop(current.poll)
        avahi_client_free(current.client)
        avahi_threaded_poll_free(current.poll)
        current.watcher.release()
        if connection?.generation == current.generation { connection = nil }
        for entry in lookups.values { entry.context.release() }
        let stranded = lookups.values
        lookups = [:]
        // Only a connection that broke before its failure arrived strands lookups here.
        for entry in stranded {
            entry.failed(DaemonFailure(stage: .running, code: Int32(AVAHI_ERR_DISCONNECTED), bus: SystemBus.probe()))
        }
    }

    private func closeWhenIdle() {
        assertOnDaemonClientQueue()
        guard lookups.isEmpty, connection != nil else { return }
        idleMark &+= 1
        let mark = idleMark
        daemonClientQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.idleLinger.nanoseconds))) {
            let client = DaemonClient.shared
            guard client.idleMark == mark, client.lookups.isEmpty, let current = client.connection else { return }
            client.close(current)
        }
    }
}

/// The connection's state callback context: hands a failure to `daemonClientQueue`. Runs on
/// Avahi's poll thread (or inside `avahi_client_new`).
private final class ConnectionWatcher: Sendable {
    let generation: UInt64
    init(generation: UInt64) { self.generation = generation }

    func lost(code: Int32) {
        daemonClientQueue.async { [generation] in DaemonClient.shared.lost(generation: generation, code: code) }
    }
}

/// A retained callback context on its way to `daemonClientQueue`, where it is used.
private struct UncheckedContext: @unchecked Sendable {
    let value: Unmanaged<AnyObject>
    init(_ value: Unmanaged<AnyObject>) { self.value = value }
}

/// The serial queue on which `DaemonClient` connects, starts, frees and closes (all of which
/// block on D-Bus or on joining the poll thread, so not on `dnssdQueue`).
let daemonClientQueue = DispatchQueue(label: "svc.avahi-lookups")

/// Stops the program (in debug builds only) when called off `daemonClientQueue`.
func assertOnDaemonClientQueue() {
    assert({ dispatchPrecondition(condition: .onQueue(daemonClientQueue)); return true }())
}
