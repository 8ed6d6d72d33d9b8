import CDNSSD
import Dispatch
import DiscoveryCore
import TransportCore

/// What one `DNSServiceBrowse` asks for, and how its first batch ends.
struct BrowseRequest: Sendable {
    let regtype: String
    let domain: ServiceDomain
    let interface: NetworkInterface?
    /// A phrase for error messages, e.g. "browsing for _p2pipp._tcp in local.".
    let operation: String
    let quietPeriod: Duration
    let minimumWait: Duration
    /// Whether a browser on avahi-daemon's own client library runs beside the dns_sd browse
    /// until the first batch is complete, so that the daemon's "all for now" can end it before
    /// the quiet period does (`AllForNowGate`). Its names must be the dns_sd browse's names.
    let usesDaemonAllForNow: Bool
}

/// One browse's state: reports are turned into items (`makeItem`, nil to ignore a report),
/// merged per interface, and sent as events; the daemon's loss and return are handled here.
///
/// The first batch is complete (`.completeForNow`) at the earlier of two moments: a quiet
/// period after the last report, never before the minimum wait; or, with
/// `usesDaemonAllForNow`, once avahi-daemon's own browser said "all for now" and the dns_sd
/// browse has reported everything that browser found (when the daemon already browses the
/// type for someone else, that is within milliseconds).
/// - Important: every field is used only on `dnssdQueue`.
final class BrowseCore<Item: Hashable & Sendable & CustomStringConvertible>: @unchecked Sendable {
    /// Turns a report's instance name, type and domain into an item, or nil to ignore it.
    typealias MakeItem = @Sendable (_ name: String, _ regtype: String?, _ domain: String?) -> Item?

    private let request: BrowseRequest
    private let makeItem: MakeItem
    private let continuation: AsyncThrowingStream<DiscoveryEvent<Item>, any Error>.Continuation
    private let onDaemonStatus: @Sendable (DaemonStatus) -> Void
    private var merger = DiscoveryMerger<Item>()
    private var ref: ServiceRef?
    private var quietTimer: DispatchSourceTimer?
    private var earliestComplete = DispatchTime.now()
    private var sentComplete = false
    private var isLost = false
    private var isCancelled = false
    private var backoff = ExponentialBackoff(initial: .milliseconds(250), maximum: .seconds(4))
    /// The browser on avahi-daemon's client library, until the first batch is complete.
    private var daemonBrowser: DaemonBrowser?
    private var gate = AllForNowGate()
    /// How long a resync after the daemon's return lasts at least before what it has not found
    /// again is reported removed: a restarted avahi-daemon starts with an empty cache and first
    /// probes its own host name, so other hosts' answers come a second or more after its bus is
    /// back (measured: 1.5 s), and a shorter resync reported instances and types as removed and
    /// then added again.
    static var resyncMinimumWait: Duration { .seconds(3) }

    /// Starts a browse and returns its events; it stops when the stream is dropped.
    ///
    /// Creating the browse blocks on D-Bus round trips (up to D-Bus's 25 s reply timeout when
    /// avahi-daemon is hung or stopped), on `dnssdQueue`; the caller waits for it only until its
    /// task is cancelled (`AbandonableCall`), and a browse created after that is cancelled.
    /// - Throws: `DNSSDError` when the daemon cannot be reached, or `CancellationError`.
    static func start(_ request: BrowseRequest, onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void,
                      makeItem: @escaping MakeItem) async throws -> AsyncThrowingStream<DiscoveryEvent<Item>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DiscoveryEvent<Item>, any Error>.makeStream()
        let core = BrowseCore(request: request, makeItem: makeItem, continuation: continuation, onDaemonStatus: onDaemonStatus)
        try await AbandonableCall.run(on: dnssdQueue, { try core.start() }, abandon: { core.cancel() })
        continuation.onTermination = { _ in dnssdQueue.async { core.cancel() } }
        return stream
    }

    private init(request: BrowseRequest, makeItem: @escaping MakeItem,
                 continuation: AsyncThrowingStream<DiscoveryEvent<Item>, any Error>.Continuation,
                 onDaemonStatus: @escaping @Sendable (DaemonStatus) -> Void) {
        self.request = request
        self.makeItem = makeItem
        self.continuation = continuation
        self.onDaemonStatus = onDaemonStatus
    }

    private func start() throws(DNSSDError) {
        assertOnDNSSDQueue()
        // First, so that its D-Bus connection is made while the dns_sd browse makes its own.
        if request.usesDaemonAllForNow && !sentComplete && daemonBrowser == nil && gate.isUsable {
            daemonBrowser = DaemonBrowser.start(regtype: request.regtype, domain: request.domain.name,
                                                interfaceIndex: request.interface?.index) { [weak self] report in
                dnssdQueue.async { [weak self] in self?.daemonReported(report) }
            }
        }
        let replies = BrowseReplies { [weak self] reply in self?.received(reply) }
        do {
            ref = try ServiceRef(queue: dnssdQueue, context: replies, operation: request.operation, onProcessError: { [weak self] error in
                self?.lost(error)
            }) { [request] ref, context in
                startBrowse(ref, interfaceIndex: request.interface?.index ?? 0, regtype: request.regtype, domain: request.domain.name, context: context)
            }
        } catch {
            stopDaemonBrowser()
            throw error
        }
        earliestComplete = .now() + .nanoseconds(Int(request.minimumWait.nanoseconds))
        restartQuietTimer()
    }

    private func daemonReported(_ report: DaemonBrowserReport) {
        assertOnDNSSDQueue()
        guard !isCancelled, !sentComplete else { return }
        switch report {
        case .found(let name, let interfaceIndex, let added):
            gate.daemonFound(.init(name: name, interfaceIndex: interfaceIndex), added: added)
        case .allForNow:
            gate.allForNow()
        case .failed:
            gate.giveUp()
            stopDaemonBrowser()
        }
        endFirstBatchIfAllForNow()
    }

    /// Ends the first batch once the daemon's "all for now" came and the dns_sd browse has
    /// caught up with what the daemon's browser found.
    private func endFirstBatchIfAllForNow() {
        guard !sentComplete, !isLost, gate.isComplete else { return }
        quietPeriodEnded()
    }

    private func stopDaemonBrowser() {
        daemonBrowser?.stop()
        daemonBrowser = nil
    }

    private func received(_ reply: BrowseReply) {
        assertOnDNSSDQueue()
        guard !isCancelled else { return }
        guard reply.code == kDNSServiceErr_NoError, let name = reply.name else {
            let error = DNSSDError.reported(reply.code, while: request.operation)
            if error.isDaemonUnavailable {
                lost(error)
            } else {
                continuation.finish(throwing: error)
                cancel()
            }
            return
        }
        if let item = makeItem(name, reply.regtype, reply.domain) {
            let interface = networkInterface(reply.interfaceIndex)
            if let event = reply.isAdd ? merger.add(item, on: interface) : merger.remove(item, on: interface) {
                continuation.yield(event)
            }
        }
        restartQuietTimer()
        if !sentComplete {
            gate.listed(.init(name: name, interfaceIndex: reply.interfaceIndex))
            endFirstBatchIfAllForNow()
        }
    }

    /// (Re)arms the timer that ends the first batch, or a resync, after a quiet period.
    private func restartQuietTimer() {
        quietTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: dnssdQueue)
        let quiet = DispatchTime.now() + .nanoseconds(Int(request.quietPeriod.nanoseconds))
        timer.schedule(deadline: max(quiet, earliestComplete))
        timer.setEventHandler { [weak self] in self?.quietPeriodEnded() }
        timer.resume()
        quietTimer = timer
    }

    private func quietPeriodEnded() {
        assertOnDNSSDQueue()
        quietTimer?.cancel()
        quietTimer = nil
        guard !isLost else { return }
        for event in merger.endResync() { continuation.yield(event) }
        if !sentComplete {
            sentComplete = true
            stopDaemonBrowser()
            continuation.yield(.completeForNow)
        }
    }

    private func lost(_ error: DNSSDError) {
        assertOnDNSSDQueue()
        ref?.cancel()
        ref = nil
        quietTimer?.cancel()
        quietTimer = nil
        guard !isCancelled else { return }
        // A first batch interrupted by the daemon's loss ends by the quiet period after its return.
        gate.giveUp()
        stopDaemonBrowser()
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
                // Reachable again; the resync ends after the next quiet period, not before
                // `resyncMinimumWait`.
                self.earliestComplete = .now() + .nanoseconds(Int(Self.resyncMinimumWait.nanoseconds))
                self.restartQuietTimer()
                self.isLost = false
                self.backoff.reset()
                self.onDaemonStatus(.restored)
            } catch {
                self.lost(error)
            }
        }
    }

    private func cancel() {
        assertOnDNSSDQueue()
        guard !isCancelled else { return }
        isCancelled = true
        quietTimer?.cancel()
        ref?.cancel()
        ref = nil
        stopDaemonBrowser()
        continuation.finish()
    }
}

/// One `DNSServiceBrowse` reply, copied out of the C callback.
struct BrowseReply {
    let code: DNSServiceErrorType
    let isAdd: Bool
    let interfaceIndex: UInt32
    let name: String?
    let regtype: String?
    let domain: String?
}

/// The C callback's context: hands each reply to the browse that owns the ref. Runs on `dnssdQueue`.
private final class BrowseReplies: @unchecked Sendable {
    let handle: (BrowseReply) -> Void
    init(_ handle: @escaping (BrowseReply) -> Void) { self.handle = handle }
}

/// Calls `DNSServiceBrowse` (non-generic: a C callback cannot be formed in a generic context).
private func startBrowse(_ ref: UnsafeMutablePointer<DNSServiceRef?>, interfaceIndex: UInt32, regtype: String, domain: String,
                         context: UnsafeMutableRawPointer) -> DNSServiceErrorType {
    DNSServiceBrowse(ref, 0, interfaceIndex, regtype, domain, { _, flags, interfaceIndex, code, name, regtype, domain, context in
        Unmanaged<BrowseReplies>.fromOpaque(context!).takeUnretainedValue().handle(BrowseReply(
            code: code, isAdd: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, interfaceIndex: interfaceIndex,
            name: name.map { String(cString: $0) }, regtype: regtype.map { String(cString: $0) },
            domain: domain.map { String(cString: $0) }))
    }, context)
}
