import CDNSSD
import Dispatch
import DiscoveryCore
import TransportCore

/// What to do when the requested name is already taken on the network.
public enum ConflictPolicy: String, Sendable, Hashable, CaseIterable {
    /// Take the next free name: ` #2`, ` #3`, ... appended (`InstanceName.alternative`).
    case rename
    /// Withdraw and fail with `.nameConflict`.
    case fail
}

/// A change in a running registration, reported on `ServiceRegistration.events`.
public enum RegistrationEvent: Sendable, Hashable {
    /// The daemon renamed the service after a conflict that arose later.
    case renamed(String)
    /// The daemon went away; the registration is re-created when it is back.
    case daemonLost(DNSSDError)
    /// Registered again after the daemon came back, under this name.
    case restored(String)
    /// The registration ended for good (e.g. a later rename under the `.fail` policy).
    case failed(DNSSDError)
}

/// A service registered with the daemon (`DNSServiceRegister`). It stays registered until
/// `cancel()`, and re-registers by itself when avahi-daemon restarts.
public final class ServiceRegistration: Sendable {
    /// What to register.
    public struct Options: Sendable {
        /// The instance name, or nil for the daemon's default (the host name).
        public var name: InstanceName?
        public var type: ServiceType
        public var domain: ServiceDomain
        public var port: UInt16
        public var txt: TXTRecord
        /// Announce on this interface only, or on every interface avahi-daemon uses (nil).
        public var interface: NetworkInterface?
        public var conflictPolicy: ConflictPolicy
        /// How long to wait for the daemon to confirm before failing with `.timedOut`.
        public var timeout: Duration

        public init(name: InstanceName? = nil, type: ServiceType = .p2pipp, domain: ServiceDomain = .local, port: UInt16,
                    txt: TXTRecord = TXTRecord(), interface: NetworkInterface? = nil, conflictPolicy: ConflictPolicy = .rename,
                    timeout: Duration = .seconds(10)) {
            self.name = name
            self.type = type
            self.domain = domain
            self.port = port
            self.txt = txt
            self.interface = interface
            self.conflictPolicy = conflictPolicy
            self.timeout = timeout
        }
    }

    private let core: RegistrationCore
    /// Renames, daemon loss and recovery, in order. Ends after `cancel()` or `.failed`.
    public let events: AsyncStream<RegistrationEvent>

    private init(core: RegistrationCore, events: AsyncStream<RegistrationEvent>) {
        self.core = core
        self.events = events
    }

    /// Registers a service and returns once the daemon confirmed it.
    /// - Throws: `DNSSDError`: `.daemonUnreachable`/`.busUnreachable`, `.nameConflict` under
    ///   the `.fail` policy, `.timedOut` when the daemon does not confirm within the timeout;
    ///   or `CancellationError`.
    public static func register(_ options: Options) async throws -> ServiceRegistration {
        let (events, continuation) = AsyncStream<RegistrationEvent>.makeStream()
        let core = RegistrationCore(options: options, events: continuation)
        do {
            _ = try await OneShot<String>.run(timeout: options.timeout, onTimeout: { _ in
                DNSSDError.timedOut(core.operation, after: options.timeout)
            }) { oneShot in
                try core.start(confirming: oneShot)
            }
        } catch {
            dnssdQueue.async { core.cancel() }
            throw error
        }
        return ServiceRegistration(core: core, events: events)
    }

    /// The name the daemon registered, which may differ from the one requested.
    public var name: String { dnssdQueue.sync { core.registeredName } }

    /// Replaces the TXT record while registered (`DNSServiceUpdateRecord`).
    /// - Throws: `DNSSDError` when the daemon refuses it or is away.
    public func updateTXT(_ txt: TXTRecord) throws {
        try dnssdQueue.sync { try core.updateTXT(txt) }
    }

    /// Deregisters: the daemon announces the removal at once. Ends `events`.
    public func cancel() {
        dnssdQueue.async { [core] in core.cancel() }
    }

    /// Deregisters and returns once the daemon has withdrawn the service, so that a process
    /// may exit right after.
    public func cancel() async {
        await withCheckedContinuation { continuation in
            dnssdQueue.async { [core] in core.cancel { continuation.resume() } }
        }
    }

    deinit { cancel() }
}

/// The registration's state and C callback context.
/// - Important: every field is used only on `dnssdQueue`.
final class RegistrationCore: @unchecked Sendable {
    let options: Options
    typealias Options = ServiceRegistration.Options
    let operation: String
    private let events: AsyncStream<RegistrationEvent>.Continuation
    private var ref: ServiceRef?
    private var confirmation: OneShot<String>?
    private(set) var registeredName = ""
    /// The name being asked for: the requested one, or an alternative after conflicts.
    private var candidateName: InstanceName?
    private var renames = 0
    private var txtBytes: [UInt8]
    private var isCancelled = false
    private var isLost = false
    private var backoff = ExponentialBackoff(initial: .milliseconds(250), maximum: .seconds(4))

    init(options: Options, events: AsyncStream<RegistrationEvent>.Continuation) {
        self.options = options
        self.events = events
        candidateName = options.name
        txtBytes = options.txt.encoded()
        operation = "registering \(options.name.map { "'\($0)'" } ?? "the host name") as \(options.type) in \(options.domain) on port \(options.port)"
    }

    func start(confirming oneShot: OneShot<String>) throws {
        assertOnDNSSDQueue()
        confirmation = oneShot
        do throws(DNSSDError) {
            try createRef()
        } catch where error.code == .nameConflict {
            conflicted(error) // a name this very daemon holds is refused at once, not in a reply
        }
    }

    private func createRef() throws(DNSSDError) {
        let options = options
        let name = candidateName?.value
        let txt = txtBytes
        ref = try ServiceRef(queue: dnssdQueue, context: self, operation: operation, onProcessError: { [weak self] error in
            self?.lost(error)
        }) { ref, context in
            txt.withUnsafeBytes { txtPointer in
                DNSServiceRegister(ref, 0, options.interface?.index ?? 0, name, options.type.description, options.domain.name, nil,
                                   options.port.bigEndian, UInt16(txtPointer.count), txtPointer.baseAddress, { _, _, code, name, _, _, context in
                    Unmanaged<RegistrationCore>.fromOpaque(context!).takeUnretainedValue().reply(code: code, name: name.map { String(cString: $0) })
                }, context)
            }
        }
    }

    private func reply(code: DNSServiceErrorType, name: String?) {
        assertOnDNSSDQueue()
        guard !isCancelled else { return }
        guard code == kDNSServiceErr_NoError, let name else {
            let error = DNSSDError.reported(code, while: operation)
            if error.isDaemonUnavailable {
                lost(error)
            } else if error.code == .nameConflict {
                conflicted(error)
            } else {
                fail(error)
            }
            return
        }
        if options.conflictPolicy == .fail, isRenamed(name) {
            fail(DNSSDError(.nameConflict, "the name '\(options.name?.value ?? name)' is already in use on the network (the daemon offered '\(name)'); choose another name, or allow renaming"))
            return
        }
        let previous = registeredName
        registeredName = name
        backoff.reset()
        if let confirmation {
            self.confirmation = nil
            confirmation.finish(.success(name))
        } else if isLost {
            isLost = false
            events.yield(.restored(name))
        } else if previous != name {
            events.yield(.renamed(name))
        }
    }

    /// Avahi reports a taken name (at first, or when a conflict arises later) instead of
    /// renaming: under `.rename`, try the next alternative; under `.fail`, withdraw.
    private func conflicted(_ error: DNSSDError) {
        ref?.cancel()
        ref = nil
        let taken = candidateName?.value ?? registeredName
        guard options.conflictPolicy == .rename, let candidate = candidateName, renames < 100 else {
            fail(DNSSDError(.nameConflict, "the name '\(taken)' is already in use on the network; choose another name, or allow renaming", rawValue: error.rawValue))
            return
        }
        renames += 1
        candidateName = candidate.alternative
        do throws(DNSSDError) {
            try createRef()
        } catch where error.code == .nameConflict {
            conflicted(error) // at most 100 renames in all (above)
        } catch {
            if error.isDaemonUnavailable { lost(error) } else { fail(error) }
        }
    }

    /// Whether the daemon registered another name than the one asked for. With no name asked
    /// for, Avahi uses the host name, which cannot contain " #", so a " #N" suffix is a rename.
    private func isRenamed(_ name: String) -> Bool {
        if let requested = candidateName?.value { return name != requested }
        let digits = name.reversed().prefix(while: { $0.isASCII && $0.isNumber })
        return !digits.isEmpty && name.dropLast(digits.count).hasSuffix(" #")
    }

    private func lost(_ error: DNSSDError) {
        ref?.cancel()
        ref = nil
        guard !isCancelled else { return }
        if let confirmation {
            self.confirmation = nil
            confirmation.finish(.failure(error))
            return
        }
        if !isLost {
            isLost = true
            events.yield(.daemonLost(error))
        }
        scheduleRetry()
    }

    private func scheduleRetry() {
        let delay = backoff.nextDelay()
        dnssdQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay.nanoseconds))) { [weak self] in
            guard let self, !self.isCancelled, self.ref == nil else { return }
            do { try self.createRef() } catch { self.scheduleRetry() }
        }
    }

    private func fail(_ error: DNSSDError) {
        if let confirmation {
            self.confirmation = nil
            confirmation.finish(.failure(error))
        } else {
            events.yield(.failed(error))
        }
        cancel()
    }

    func updateTXT(_ txt: TXTRecord) throws(DNSSDError) {
        assertOnDNSSDQueue()
        txtBytes = txt.encoded()
        guard let ref, !isLost else { return } // used when the registration is re-created
        let code = ref.updatePrimaryTXT(txtBytes)
        guard code == kDNSServiceErr_NoError else {
            throw DNSSDError.reported(code, while: "updating the TXT record of '\(registeredName)'")
        }
    }

    /// Withdraws the service; `completion` runs once the daemon has been told.
    func cancel(then completion: @escaping () -> Void = {}) {
        assertOnDNSSDQueue()
        if let ref {
            ref.cancel(then: completion)
        } else {
            completion()
        }
        ref = nil
        guard !isCancelled else { return }
        isCancelled = true
        events.finish()
    }
}
