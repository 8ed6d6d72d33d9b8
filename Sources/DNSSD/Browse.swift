import CDNSSD
import Dispatch
import DiscoveryCore
import TransportCore

/// The daemon connection of a long-lived operation went away, or came back.
public enum DaemonStatus: Sendable, Hashable {
    case lost(DNSSDError)
    case restored
}

/// Browses for instances of a service type (`DNSServiceBrowse`), as a stream of events about
/// logical instances: Avahi's per-interface, per-protocol reports are merged (`BrowseMerger`).
public struct ServiceBrowser: Sendable {
    public var type: ServiceType
    public var domain: ServiceDomain
    /// How long no report may arrive before `.completeForNow` is sent.
    public var quietPeriod: Duration
    /// `.completeForNow` is never sent earlier than this after the start, so that hosts whose
    /// answers are not cached yet have time to reply to the first query.
    public var minimumWait: Duration

    public init(type: ServiceType = .p2pipp, domain: ServiceDomain = .local,
                quietPeriod: Duration = .milliseconds(200), minimumWait: Duration = .milliseconds(350)) {
        self.type = type
        self.domain = domain
        self.quietPeriod = quietPeriod
        self.minimumWait = minimumWait
    }

    /// Starts browsing.
    ///
    /// When avahi-daemon goes away the stream stays open: `onDaemonStatus` is told, the
    /// browse is re-created with backoff, and instances that did not come back are removed.
    /// The browse stops when the stream is dropped or its consuming task is cancelled.
    /// - Parameter onDaemonStatus: called on an internal queue when the daemon is lost or back.
    /// - Throws: `DNSSDError` at once when the daemon cannot be reached.
    public func start(onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void = { _ in }) throws -> AsyncThrowingStream<BrowseEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BrowseEvent, any Error>.makeStream()
        let core = BrowseCore(browser: self, continuation: continuation, onDaemonStatus: onDaemonStatus)
        try dnssdQueue.sync { try core.start() }
        continuation.onTermination = { _ in dnssdQueue.async { core.cancel() } }
        return stream
    }
}

/// The browse's state and C callback context.
/// - Important: every field is used only on `dnssdQueue`.
private final class BrowseCore: @unchecked Sendable {
    let browser: ServiceBrowser
    let operation: String
    private let continuation: AsyncThrowingStream<BrowseEvent, any Error>.Continuation
    private let onDaemonStatus: @Sendable (DaemonStatus) -> Void
    private var merger = BrowseMerger()
    private var ref: ServiceRef?
    private var quietTimer: DispatchSourceTimer?
    private var earliestComplete = DispatchTime.now()
    private var sentComplete = false
    private var isLost = false
    private var isCancelled = false
    private var backoff = ExponentialBackoff(initial: .milliseconds(250), maximum: .seconds(4))

    init(browser: ServiceBrowser, continuation: AsyncThrowingStream<BrowseEvent, any Error>.Continuation,
         onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void) {
        self.browser = browser
        self.continuation = continuation
        self.onDaemonStatus = onDaemonStatus
        operation = "browsing for \(browser.type) in \(browser.domain)"
    }

    func start() throws(DNSSDError) {
        let type = browser.type.description
        let domain = browser.domain.name
        ref = try ServiceRef(queue: dnssdQueue, context: self, operation: operation, onProcessError: { [weak self] error in
            self?.lost(error)
        }) { ref, context in
            DNSServiceBrowse(ref, 0, 0, type, domain, { _, flags, interfaceIndex, code, name, type, domain, context in
                Unmanaged<BrowseCore>.fromOpaque(context!).takeUnretainedValue().reply(
                    code: code, isAdd: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, interfaceIndex: interfaceIndex,
                    name: name.map { String(cString: $0) }, domain: domain.map { String(cString: $0) })
            }, context)
        }
        earliestComplete = .now() + .nanoseconds(Int(browser.minimumWait.nanoseconds))
        restartQuietTimer()
    }

    private func reply(code: DNSServiceErrorType, isAdd: Bool, interfaceIndex: UInt32, name: String?, domain: String?) {
        guard !isCancelled else { return }
        guard code == kDNSServiceErr_NoError, let name else {
            let error = DNSSDError.daemon(code, while: operation, bus: SystemBus.probe())
            if error.isDaemonUnavailable {
                lost(error)
            } else {
                continuation.finish(throwing: error)
                cancel()
            }
            return
        }
        let instance = ServiceInstance(name: name, type: browser.type,
                                       domain: domain.map(ServiceDomain.init(reported:)) ?? browser.domain)
        let interface = networkInterface(interfaceIndex)
        if let event = isAdd ? merger.add(instance, on: interface) : merger.remove(instance, on: interface) {
            continuation.yield(event)
        }
        restartQuietTimer()
    }

    /// (Re)arms the timer that ends the first batch, or a resync, after a quiet period.
    private func restartQuietTimer() {
        quietTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: dnssdQueue)
        let quiet = DispatchTime.now() + .nanoseconds(Int(browser.quietPeriod.nanoseconds))
        timer.schedule(deadline: max(quiet, earliestComplete))
        timer.setEventHandler { [weak self] in self?.quietPeriodEnded() }
        timer.resume()
        quietTimer = timer
    }

    private func quietPeriodEnded() {
        quietTimer?.cancel()
        quietTimer = nil
        guard !isLost else { return }
        for event in merger.endResync() { continuation.yield(event) }
        if !sentComplete {
            sentComplete = true
            continuation.yield(.completeForNow)
        }
    }

    private func lost(_ error: DNSSDError) {
        ref?.cancel()
        ref = nil
        quietTimer?.cancel()
        quietTimer = nil
        guard !isCancelled else { return }
        if !isLost {
            isLost = true
            merger.beginResync()
            onDaemonStatus(.lost(error))
        }
        let delay = backoff.nextDelay()
        dnssdQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay.nanoseconds))) { [weak self] in
            guard let self, !self.isCancelled, self.ref == nil else { return }
            do throws(DNSSDError) {
                try self.start()
                // Reachable again; the resync ends after the next quiet period.
                self.isLost = false
                self.backoff.reset()
                self.onDaemonStatus(.restored)
            } catch {
                self.lost(error)
            }
        }
    }

    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        quietTimer?.cancel()
        ref?.cancel()
        ref = nil
        continuation.finish()
    }
}
